package ollama

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/internal/llmtest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
)

func TestParseModelfile(t *testing.T) {
	mf, err := ParseModelfile(`# Mio
FROM qwen2.5:3b
PARAMETER num_ctx 8192
PARAMETER temperature 0.7
PARAMETER stop "<|im_end|>"
PARAMETER stop <|endoftext|>
SYSTEM """あなたは Mio です。
二行目。"""
MESSAGE user こんにちは
LICENSE "Apache-2.0"
`)
	if err != nil {
		t.Fatal(err)
	}
	want := Modelfile{From: "qwen2.5:3b", System: "あなたは Mio です。\n二行目。", License: []string{"Apache-2.0"},
		Parameters: map[string]any{"num_ctx": int64(8192), "temperature": 0.7, "stop": []string{"<|im_end|>", "<|endoftext|>"}},
		Messages:   []CreateMessage{{Role: "user", Content: "こんにちは"}}}
	if !reflect.DeepEqual(mf, want) {
		t.Fatalf("parsed %#v\nwant   %#v", mf, want)
	}
	if mf.NumCtx() != 8192 {
		t.Errorf("NumCtx = %d", mf.NumCtx())
	}
	req := mf.CreateRequest("chat-v1:latest", "llama3.2:1b")
	if req.Model != "chat-v1:latest" || req.From != "llama3.2:1b" || req.License != "Apache-2.0" || req.System != want.System {
		t.Errorf("create request = %+v", req)
	}
	for name, text := range map[string]string{
		"no FROM":           "PARAMETER num_ctx 8192",
		"FROM a file":       "FROM ./model.gguf",
		"unknown parameter": "FROM m\nPARAMETER num_gqa 8",
		"bad int":           "FROM m\nPARAMETER num_ctx lots",
		"adapter":           "FROM m\nADAPTER ./lora.gguf",
		"unterminated":      "FROM m\nSYSTEM \"\"\"open",
		"bad message role":  "FROM m\nMESSAGE robot hi",
	} {
		if _, err := ParseModelfile(text); err == nil || !strings.Contains(err.Error(), "modelfile") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestPullAndCreateSpeakOllamasAPI(t *testing.T) {
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("x"), fakellm.WithModels())
	api := NewAPI(f.URL, nil)
	var seen []Progress
	if err := api.Pull(context.Background(), "qwen2.5:3b", func(p Progress) { seen = append(seen, p) }); err != nil {
		t.Fatal(err)
	}
	if len(seen) < 3 || seen[0].Status != "pulling manifest" || seen[len(seen)-1].Status != "success" {
		t.Fatalf("progress = %+v", seen)
	}
	var counted bool
	for _, p := range seen {
		counted = counted || (p.Total > 0 && p.Completed > 0 && strings.HasPrefix(p.Digest, "sha256:"))
	}
	if !counted {
		t.Errorf("no byte progress in %+v", seen)
	}
	mf, err := ParseModelfile("FROM qwen2.5:3b\nPARAMETER num_ctx 8192\nSYSTEM Mio")
	if err != nil {
		t.Fatal(err)
	}
	if err := api.Create(context.Background(), mf.CreateRequest("chat-v1:latest", ""), nil); err != nil {
		t.Fatal(err)
	}
	admin := f.AdminRequests()
	if len(admin) != 2 || admin[0].Path != "/api/pull" || admin[0].Body["model"] != "qwen2.5:3b" || admin[0].Body["stream"] != true {
		t.Fatalf("pull = %+v", admin)
	}
	body := admin[1].Body
	params, _ := body["parameters"].(map[string]any)
	if admin[1].Path != "/api/create" || body["model"] != "chat-v1:latest" || body["from"] != "qwen2.5:3b" || body["system"] != "Mio" ||
		params["num_ctx"] != float64(8192) || body["stream"] != true {
		t.Fatalf("create = %s", admin[1].Raw)
	}
	models, err := api.List(context.Background())
	if err != nil || !Has(models, "chat-v1") || !Has(models, "qwen2.5:3b") {
		t.Fatalf("list = %+v, %v", models, err)
	}
	st := Check(context.Background(), api, "chat-v1:latest", 8192, 8192)
	if !st.OK() || st.ModelNumCtx != 8192 || st.ContextLength != 32768 {
		t.Errorf("check = %+v", st)
	}
}

func TestPullFailureAndUnreachableServer(t *testing.T) {
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("x"), fakellm.WithModels(), fakellm.WithPullError("pull model manifest: file does not exist"))
	err := NewAPI(f.URL, nil).Pull(context.Background(), "nonesuch:1b", nil)
	if err == nil || !strings.Contains(err.Error(), "file does not exist") {
		t.Fatalf("err = %v", err)
	}
	f.Close()
	_, err = NewAPI(f.URL, nil).List(context.Background())
	if !errors.Is(err, llm.ErrUnreachable) || !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), f.URL) {
		t.Fatalf("err = %v", err)
	}
	st := Check(context.Background(), NewAPI(f.URL, nil), "chat-v1:latest", 8192, 8192)
	if st.OK() || st.Reachable || st.Fix != "ollama serve" {
		t.Errorf("check = %+v", st)
	}
	if err := NewAPI(f.URL, nil).Pull(context.Background(), "m", nil); !errors.Is(err, llm.ErrUnreachable) {
		t.Errorf("pull err = %v", err)
	}
}

// guarded builds a worker client of the fake behind a Guard whose restart command creates the
// fake's restart file.
func guarded(t *testing.T, f *fakellm.Server, restartFile string, log *slog.Logger, command ...string) (*Guard, *Restarter) {
	t.Helper()
	c, err := New(llm.Config{Model: "worker-v1:latest", BaseURL: f.URL, RetryMax: 1}, llm.WithSleep((&llmtest.Sleeps{}).Sleep))
	if err != nil {
		t.Fatal(err)
	}
	if command == nil && restartFile != "" {
		command = []string{"touch", restartFile}
	}
	r := NewRestarter(RestarterConfig{Command: command, BaseURL: f.URL})
	return NewGuard(c, r, f.URL, log), r
}

var hello = llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}

func TestMissingModelRestartsOnceForConcurrentCallers(t *testing.T) {
	file := filepath.Join(t.TempDir(), "restart")
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("はい"), fakellm.WithModels("worker-v1:latest"), fakellm.WithRestartFile(file))
	f.MissingUntilRestart("worker-v1:latest")
	var logs bytes.Buffer
	g, _ := guarded(t, f, file, slog.New(slog.NewJSONHandler(&logs, nil)))
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			resp, err := g.Chat(context.Background(), hello)
			if err == nil && resp.Text != "はい" {
				err = errors.New("wrong answer " + resp.Text)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	if n := f.Restarts(); n != 1 {
		t.Errorf("restarts = %d, want exactly one for all callers", n)
	}
	if n := strings.Count(logs.String(), `"msg":"llm.ollama_restart"`); n != 1 {
		t.Errorf("restart logged %d times:\n%s", n, logs.String())
	}
}

func TestStillMissingAfterRestartIsToldAndNotRestartedAgain(t *testing.T) {
	file := filepath.Join(t.TempDir(), "restart")
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("x"), fakellm.WithModels(), fakellm.WithRestartFile(file))
	g, _ := guarded(t, f, file, nil)
	for i := range 3 { // the first message, then the same turn delivered again twice
		_, err := g.Chat(context.Background(), hello)
		lme, ok := errors.AsType[*llm.LocalModelError](err)
		if !ok || !lme.Missing || !lme.Restarted || lme.Model != "worker-v1:latest" || !errors.Is(err, llm.ErrModelUnavailable) || errors.Is(err, llm.ErrUnavailable) {
			t.Fatalf("call %d: err = %#v", i, err)
		}
	}
	if n := f.Restarts(); n != 1 {
		t.Errorf("restarts = %d, want one (then the cool-down)", n)
	}
}

func TestUnreachableServerRestartsAndRetries(t *testing.T) {
	file := filepath.Join(t.TempDir(), "restart")
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("起きました"), fakellm.WithModels("worker-v1:latest"), fakellm.WithRestartFile(file))
	f.DownUntilRestart()
	g, _ := guarded(t, f, file, nil)
	resp, err := g.Chat(context.Background(), hello)
	if err != nil || resp.Text != "起きました" {
		t.Fatalf("resp %+v, err %v", resp, err)
	}
	if f.Restarts() != 1 {
		t.Errorf("restarts = %d", f.Restarts())
	}
}

func TestWithoutRestartCommand(t *testing.T) {
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("x"), fakellm.WithModels())
	g, _ := guarded(t, f, "", nil)
	_, err := g.Chat(context.Background(), hello)
	if lme, ok := errors.AsType[*llm.LocalModelError](err); !ok || !lme.Missing || lme.Restarted || lme.Reason() != "model_unavailable:missing:worker-v1:latest" {
		t.Fatalf("missing model: err = %v", err)
	}
	if model, missing, ok := llm.ParseLocalModelReason("model_unavailable:missing:worker-v1:latest"); !ok || !missing || model != "worker-v1:latest" {
		t.Errorf("parsed %q %v %v", model, missing, ok)
	}
	f.DownUntilRestart()
	_, err = g.Chat(context.Background(), hello)
	// A server that is down stays a transient failure: the caller's own retry policy applies.
	if !errors.Is(err, llm.ErrUnreachable) || errors.Is(err, llm.ErrModelUnavailable) {
		t.Fatalf("down: err = %v", err)
	}
}

func TestFailingRestartCommandIsToldAndLoggedMasked(t *testing.T) {
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("x"), fakellm.WithModels())
	var logs bytes.Buffer
	g, _ := guarded(t, f, "", slog.New(slog.NewJSONHandler(&logs, nil)), "false", "--token=sk-proj-ZZabcdefghijklmnopqrstuvwx1234")
	_, err := g.Chat(context.Background(), hello)
	if lme, ok := errors.AsType[*llm.LocalModelError](err); !ok || !lme.Restarted || !strings.Contains(err.Error(), "ollama restart false") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(logs.String(), "llm.ollama_restart_failed") || strings.Contains(logs.String(), "ZZabcdefghijklmnopqrstuvwx1234") {
		t.Errorf("logs:\n%s", logs.String())
	}
}

func TestRestarterCoolDownEnds(t *testing.T) {
	now := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	file := filepath.Join(t.TempDir(), "restart")
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("x"), fakellm.WithModels("m:latest"), fakellm.WithRestartFile(file))
	r := NewRestarter(RestarterConfig{Command: []string{"touch", file}, BaseURL: f.URL, Now: func() time.Time { return now }})
	if err := r.Restart(context.Background(), r.Generation(), "m", "test", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Restart(context.Background(), r.Generation(), "m", "test", nil); !errors.Is(err, ErrRestartCoolingDown) {
		t.Fatalf("err = %v, want cooling down", err)
	}
	now = now.Add(DefaultRestartCooldown)
	if err := r.Restart(context.Background(), r.Generation(), "m", "test", nil); err != nil {
		t.Fatal(err)
	}
	if f.Restarts() != 2 {
		t.Errorf("restarts = %d", f.Restarts())
	}
}

// A server that cannot be reached is ErrUnreachable (and ErrUnavailable); one answering 5xx is
// only ErrUnavailable: a restart is for the first.
func TestUnreachableIsToldApartFrom5xx(t *testing.T) {
	down := llmtest.NewFake(t, llmtest.Step{Status: 200})
	down.Srv.Close()
	c := ollamaClient(t, down, &llmtest.Sleeps{}, nil)
	_, err := c.Chat(context.Background(), hello)
	if !errors.Is(err, llm.ErrUnreachable) || !errors.Is(err, llm.ErrUnavailable) || llm.Code(err) != "unavailable" {
		t.Fatalf("refused: %v", err)
	}
	busy := llmtest.NewFake(t, llmtest.Step{Status: 503, Body: `{"error":"loading"}`})
	c = ollamaClient(t, busy, &llmtest.Sleeps{}, nil)
	_, err = c.Chat(context.Background(), hello)
	if !errors.Is(err, llm.ErrUnavailable) || errors.Is(err, llm.ErrUnreachable) {
		t.Fatalf("503: %v", err)
	}
	if missing, isDown := failure(err); missing || isDown {
		t.Errorf("503 would restart Ollama")
	}
}

// The restart command sees PATH and the like, never the service's keys.
func TestRestartCommandGetsAScrubbedEnvironment(t *testing.T) {
	t.Setenv("PICOCLAW_SERVICE_KEY", "service-key-that-must-not-leak")
	t.Setenv("OPENAI_API_KEY", "sk-proj-ZZabcdefghijklmnopqrstuvwx1234")
	out := filepath.Join(t.TempDir(), "env")
	if err := runRestart(context.Background(), []string{"sh", "-c", "env > " + out}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env := string(data)
	if strings.Contains(env, "service-key-that-must-not-leak") || strings.Contains(env, "sk-proj-") || !strings.Contains(env, "PATH=") {
		t.Errorf("restart environment:\n%s", env)
	}
}

// A shared Restarter serves a model only on its server and with its command; a model elsewhere
// (models.vision with a base_url of its own) gets its own.
func TestGuardedSharesOnlyAMatchingRestarter(t *testing.T) {
	cfg := llm.Config{Provider: llm.ProviderOllama, Model: "llava:7b", BaseURL: "http://127.0.0.1:11434/", RestartCommand: []string{"systemctl", "restart", "ollama"}}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	same := NewRestarter(RestarterConfig{Command: []string{"systemctl", "restart", "ollama"}, BaseURL: "http://127.0.0.1:11434"})
	other := NewRestarter(RestarterConfig{Command: []string{"systemctl", "restart", "ollama"}, BaseURL: "http://gpu.local:11434"})
	otherCommand := NewRestarter(RestarterConfig{Command: []string{"ollama", "serve"}, BaseURL: "http://127.0.0.1:11434"})
	if g := Guarded(c, same, nil).(*Guard); g.restarter != same {
		t.Error("a matching Restarter was not shared")
	}
	for _, r := range []*Restarter{other, otherCommand, nil} {
		g := Guarded(c, r, nil).(*Guard)
		if g.restarter == r || g.restarter == nil || !g.restarter.Serves(c.cfg) {
			t.Errorf("Restarter %+v: guard got %+v", r, g.restarter)
		}
	}
	noCommand, err := New(llm.Config{Provider: llm.ProviderOllama, Model: "m", BaseURL: "http://127.0.0.1:11434"})
	if err != nil {
		t.Fatal(err)
	}
	if g := Guarded(noCommand, same, nil).(*Guard); g.restarter != nil {
		t.Error("a model without restart_command got a Restarter of another command")
	}
}
