package service_test

import (
	"path/filepath"
	"strings"
	"testing"

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
