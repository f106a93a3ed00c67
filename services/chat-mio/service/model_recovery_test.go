package service_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/peertest"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/service"
)

// startRecovering runs chat-mio on ollama with a restart command that "restarts" the fake.
func startRecovering(t *testing.T, ollama *fakellm.Server, restartFile, locale string) *running {
	t.Helper()
	r := testinfra.Redis(t)
	return startOn(t, ollama, peertest.Start(t, "Uowner"), func(cfg *service.Config) {
		cfg.Redis.Addr, cfg.Redis.KeyPrefix = r.Addr, r.Prefix
		cfg.Ollama.RestartCommand = []string{"touch", restartFile}
		cfg.Locale = locale
	})
}

func TestMissingChatModelRestartsOllamaOnceAndAnswers(t *testing.T) {
	file := filepath.Join(t.TempDir(), "restart")
	ollama := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("こんにちは、Mio です。"), fakellm.WithModels("chat-v1:latest"), fakellm.WithRestartFile(file))
	ollama.MissingUntilRestart("chat-v1:latest")
	r := startRecovering(t, ollama, file, "ja")
	if ev := r.logs.Events("llm.model_unavailable"); len(ev) != 1 || ev[0]["fix"] != "picoclaw models setup" || ev[0]["agent"] != "chat" {
		t.Errorf("start-up check logged %v", ev)
	}
	if got := replyText(r.send(t, "Uowner", "おはよう")); got != "こんにちは、Mio です。" {
		t.Fatalf("reply %q", got)
	}
	if ollama.Restarts() != 1 || len(r.logs.Events("llm.ollama_restart")) != 1 {
		t.Errorf("restarts %d, logged %v", ollama.Restarts(), r.logs.Events("llm.ollama_restart"))
	}
}

func TestChatModelStillMissingTellsTheUserWhatToRun(t *testing.T) {
	for _, tc := range []struct{ locale, want string }{
		{"ja", "Mio（会話）のローカルモデル chat-v1:latest が Ollama にありません。サーバーで `picoclaw models setup` を実行してから"},
		{"en", "The local model of Mio (chat) (chat-v1:latest) is not installed on Ollama. Run `picoclaw models setup`"},
	} {
		t.Run(tc.locale, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "restart")
			ollama := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("x"), fakellm.WithModels(), fakellm.WithRestartFile(file))
			r := startRecovering(t, ollama, file, tc.locale)
			for _, text := range []string{"おはよう", "もしもし"} {
				res := r.send(t, "Uowner", text)
				if got := replyText(res); !strings.Contains(got, tc.want) || res.GetJobId() == "" {
					t.Fatalf("reply to %q: %q", text, got)
				}
			}
			if ollama.Restarts() != 1 {
				t.Errorf("restarts = %d, want one (then the cool-down)", ollama.Restarts())
			}
		})
	}
}

func TestWorkerModelMissingTellsTheUserWhatToRun(t *testing.T) {
	r := start(t)
	got := replyText(r.send(t, "Uowner", "/research 東京の天気"))
	if !strings.Contains(got, "Shiro（作業）のローカルモデル worker-v1:latest が Ollama にありません") || !strings.Contains(got, "picoclaw models setup") {
		t.Fatalf("reply %q", got)
	}
	if len(r.ollama.Requests()) != 0 {
		t.Errorf("the chat model was asked to cover for the worker: %d calls", len(r.ollama.Requests()))
	}
}

func TestOllamaStillDownAfterRestartTellsTheUser(t *testing.T) {
	ollama := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("x"), fakellm.WithModels("chat-v1:latest"))
	ollama.DownUntilRestart()
	rd := testinfra.Redis(t)
	r := startOn(t, ollama, peertest.Start(t, "Uowner"), func(cfg *service.Config) {
		cfg.Redis.Addr, cfg.Redis.KeyPrefix = rd.Addr, rd.Prefix
		cfg.Ollama.RestartCommand = []string{"false"} // the restart itself fails
	})
	got := replyText(r.send(t, "Uowner", "おはよう"))
	if !strings.Contains(got, "Mio（会話）のローカルモデル chat-v1:latest を使えません") || !strings.Contains(got, "ollama serve") {
		t.Fatalf("reply %q", got)
	}
	if ev := r.logs.Events("llm.ollama_restart_failed"); len(ev) != 1 {
		t.Errorf("restart failure logged %v", ev)
	}
}

// testPNG is a small PNG (signature and IHDR).
var testPNG = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"), make([]byte, 64)...)

const visionModel = "llava:7b"

// startVision runs chat-mio with models.vision on ollama and a restart command that
// "restarts" the fake.
func startVision(t *testing.T, ollama *fakellm.Server, restartFile string) *running {
	t.Helper()
	rd := testinfra.Redis(t)
	return startOn(t, ollama, peertest.Start(t, "Uowner"), func(cfg *service.Config) {
		cfg.Redis.Addr, cfg.Redis.KeyPrefix = rd.Addr, rd.Prefix
		cfg.Ollama.RestartCommand = []string{"touch", restartFile}
		cfg.Models.Vision.Model = visionModel
	})
}

func (r *running) sendImage(t *testing.T, user string) *chatv1.HandleMessageResponse {
	t.Helper()
	res, err := r.client.HandleMessage(context.Background(), &chatv1.HandleMessageRequest{
		SessionId: "line:" + user, Channel: "line", UserId: user, EventId: "ev-image",
		Image: &chatv1.Image{Data: testPNG, MimeType: "image/png", Source: "line:m1"}})
	if err != nil {
		t.Fatalf("HandleMessage(image): %v", err)
	}
	return res
}

// imagesSent counts the /api/chat calls that carried an image.
func imagesSent(o *fakellm.Server) int {
	n := 0
	for _, req := range o.Requests() {
		for _, m := range req.Messages {
			n += len(m.Images)
		}
	}
	return n
}

// A vision model missing at start is reported then; the first image restarts Ollama once and
// the call is tried again, while the image is recorded once.
func TestMissingVisionModelRestartsOllamaOnceAndRecordsTheImageOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "restart")
	ollama := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("猫が写っています"),
		fakellm.WithModels("chat-v1:latest", visionModel), fakellm.WithRestartFile(file))
	ollama.MissingUntilRestart(visionModel)
	r := startVision(t, ollama, file)
	if ev := r.logs.Events("llm.model_unavailable"); len(ev) != 1 || ev[0]["agent"] != "vision" || ev[0]["model"] != visionModel ||
		ev[0]["fix"] != "picoclaw models setup" {
		t.Errorf("start-up check logged %v", ev)
	}
	if ev := r.logs.Events("llm.model_ready"); len(ev) != 1 || ev[0]["agent"] != "chat" {
		t.Errorf("start-up check of the chat model logged %v", ev)
	}
	if got := replyText(r.sendImage(t, "Uowner")); got != "猫が写っています" {
		t.Fatalf("reply %q", got)
	}
	if ollama.Restarts() != 1 || r.logs.Count("llm.ollama_restart") != 1 {
		t.Errorf("restarts %d, logged %v", ollama.Restarts(), r.logs.Events("llm.ollama_restart"))
	}
	if n := imagesSent(ollama); n != 1 {
		t.Errorf("the model received %d images, want 1", n)
	}
	if n := r.peers.Approval.Logs.Count("approval.image_recorded"); n != 1 {
		t.Errorf("image recorded %d times, want once", n)
	}
}

func TestVisionModelStillMissingTellsTheUserWhatToRun(t *testing.T) {
	file := filepath.Join(t.TempDir(), "restart")
	ollama := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("x"), fakellm.WithModels("chat-v1:latest"), fakellm.WithRestartFile(file))
	r := startVision(t, ollama, file)
	got := replyText(r.sendImage(t, "Uowner"))
	if !strings.Contains(got, "Mio（画像）のローカルモデル llava:7b が Ollama にありません") || !strings.Contains(got, "picoclaw models setup") {
		t.Fatalf("reply %q", got)
	}
	if ollama.Restarts() != 1 || imagesSent(ollama) != 0 {
		t.Errorf("restarts %d, images sent %d", ollama.Restarts(), imagesSent(ollama))
	}
	if n := r.peers.Approval.Logs.Count("approval.image_recorded"); n != 1 {
		t.Errorf("image recorded %d times, want once", n)
	}
}
