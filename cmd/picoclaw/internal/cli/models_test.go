package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
)

// runModels runs picoclaw with the suite's ollama.base_url pointed at url.
func runModels(t *testing.T, url string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := map[string]string{"PICOCLAW_OLLAMA_BASE_URL": url}
	code := Main(args, IO{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(k string) string { return env[k] }})
	return code, out.String(), errOut.String()
}

func TestModelsSetupCreatesBothModelsOnAFreshOllama(t *testing.T) {
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("x"), fakellm.WithModels())
	code, out, errOut := runModels(t, f.URL, "models", "status")
	if code != ExitError || !strings.Contains(out, "chat-v1:latest") || !strings.Contains(out, "対処: picoclaw models setup") ||
		!strings.Contains(out, "モデル chat-v1:latest が "+f.URL+" にインストールされていません") {
		t.Fatalf("status before setup: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ = runModels(t, f.URL, "--locale", "en", "models", "status"); !strings.Contains(out, "model chat-v1:latest is not installed on "+f.URL) {
		t.Fatalf("status before setup, in English: %d\n%s", code, out)
	}

	code, out, errOut = runModels(t, f.URL, "models", "setup", "--locale", "en")
	if code != ExitOK {
		t.Fatalf("setup: %d\n%s\n%s", code, out, errOut)
	}
	// Not a terminal: plain progress lines, one per status.
	for _, want := range []string{"chat-v1:latest: pulling qwen2.5:3b", "pulling manifest", "verifying sha256 digest",
		"worker-v1:latest: pulling qwen2.5:7b", "writing manifest", "success"} {
		if !strings.Contains(out, want) {
			t.Errorf("setup output lacks %q:\n%s", want, out)
		}
	}
	admin := f.AdminRequests()
	if len(admin) != 4 {
		t.Fatalf("admin requests = %+v", admin)
	}
	for i, want := range []struct{ path, model, from string }{
		{"/api/pull", "qwen2.5:3b", ""}, {"/api/create", "chat-v1:latest", "qwen2.5:3b"},
		{"/api/pull", "qwen2.5:7b", ""}, {"/api/create", "worker-v1:latest", "qwen2.5:7b"},
	} {
		b := admin[i].Body
		if admin[i].Path != want.path || b["model"] != want.model || b["stream"] != true {
			t.Errorf("request %d = %s %s, want %s %s", i, admin[i].Path, admin[i].Raw, want.path, want.model)
		}
		if want.from == "" {
			continue
		}
		params, _ := b["parameters"].(map[string]any)
		system, _ := b["system"].(string)
		if b["from"] != want.from || params["num_ctx"] != float64(8192) || params["temperature"] == nil || system == "" {
			t.Errorf("create %s = %s", want.model, admin[i].Raw)
		}
		if _, deprecated := b["modelfile"]; deprecated {
			t.Errorf("create %s sends the removed modelfile field", want.model)
		}
	}
	if c, _ := f.Created("chat-v1:latest"); !strings.Contains(c.System, "Mio") {
		t.Errorf("chat-v1 system = %q", c.System)
	}
	if c, _ := f.Created("worker-v1:latest"); !strings.Contains(c.System, "Shiro") {
		t.Errorf("worker-v1 system = %q", c.System)
	}

	// Idempotent: present models are left alone.
	code, out, _ = runModels(t, f.URL, "models", "setup", "--locale", "en")
	if code != ExitOK || strings.Count(out, "present (left alone)") != 2 || len(f.AdminRequests()) != 4 {
		t.Fatalf("second setup: %d %d requests\n%s", code, len(f.AdminRequests()), out)
	}
	// --force recreates, here from another base.
	code, out, errOut = runModels(t, f.URL, "models", "setup", "--force", "--from", "qwen2.5:1.5b", "-o", "json")
	var rep modelsReport
	if code != ExitOK || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Models) != 2 {
		t.Fatalf("setup --force: %d\n%s\n%s", code, out, errOut)
	}
	for _, m := range rep.Models {
		if m.Action != "recreated" || m.From != "qwen2.5:1.5b" || !m.Present || m.ModelNumCtx != 8192 || !rep.Reachable {
			t.Errorf("report %+v", m)
		}
	}
	if admin := f.AdminRequests(); len(admin) != 8 || admin[5].Body["from"] != "qwen2.5:1.5b" {
		t.Errorf("forced requests = %d", len(admin))
	}
	code, out, _ = runModels(t, f.URL, "models", "status", "-o", "json")
	rep = modelsReport{}
	if code != ExitOK || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Models) != 2 || !rep.Models[0].Present ||
		rep.Models[0].ContextLength != 32768 || rep.Models[0].Agents[0] != "chat" {
		t.Fatalf("status -o json: %d\n%s", code, out)
	}
}

func TestModelsSetupErrors(t *testing.T) {
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("x"), fakellm.WithModels(), fakellm.WithPullError("pull model manifest: file does not exist"))
	code, out, errOut := runModels(t, f.URL, "models", "setup", "--locale", "en")
	if code != ExitError || !strings.Contains(errOut, "pull qwen2.5:3b") || !strings.Contains(errOut, "file does not exist") {
		t.Fatalf("pull failure: %d\n%s\n%s", code, out, errOut)
	}
	if len(f.OllamaModels()) != 0 {
		t.Errorf("models after a failed pull: %v", f.OllamaModels())
	}
	f.Close()
	code, out, errOut = runModels(t, f.URL, "models", "setup", "--locale", "en")
	if code != ExitUnavailable || !strings.Contains(errOut, "cannot be reached") || !strings.Contains(errOut, "ollama serve") {
		t.Fatalf("unreachable: %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runModels(t, f.URL, "models", "status")
	if code != ExitUnavailable || !strings.Contains(errOut, "ollama serve") {
		t.Fatalf("status unreachable: %d %s", code, errOut)
	}
}

// picoclaw run lists the models it cannot use in its banner (with the command that fixes
// them) and gives chat-mio, router-shiro and coder-order one restarter.
func TestEmbeddedSuiteNotesMissingModels(t *testing.T) {
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("x"), fakellm.WithModels("worker-v1:latest"))
	c := defaultSuiteConfigs()
	for _, o := range []*llm.OllamaSettings{&c.cm.Ollama, &c.rs.Ollama, &c.co.Ollama} {
		o.BaseURL, o.RestartCommand = f.URL, []string{"systemctl", "--user", "restart", "ollama"}
	}
	s := &suite{g: &globals{locale: "en"}}
	notes := s.modelNotes(context.Background(), c)
	if len(notes) != 1 || !strings.Contains(notes[0], "chat-v1:latest (chat)") || !strings.Contains(notes[0], "Fix: picoclaw models setup") {
		t.Fatalf("notes = %q", notes)
	}
	// In Japanese, what is wrong too.
	s.g.locale = "ja"
	if notes = s.modelNotes(context.Background(), c); len(notes) != 1 || !strings.Contains(notes[0], "インストールされていません。対処: picoclaw models setup") {
		t.Fatalf("notes in Japanese = %q", notes)
	}
	shareRestarter(c)
	if c.cm.Restarter == nil || c.cm.Restarter != c.rs.Restarter || c.co.Restarter != c.cm.Restarter {
		t.Errorf("restarters %p %p %p", c.cm.Restarter, c.rs.Restarter, c.co.Restarter)
	}
	if !c.cm.Restarter.Serves(c.rs.Agents.Worker.Config.WithOllama(c.rs.Ollama).WithDefaults()) {
		t.Error("the shared restarter does not serve the worker model")
	}
}

// A configured vision model (models.vision, Ollama by default) is part of the setup: with no
// Modelfile of ours it is pulled by name.
func TestModelsSetupPullsTheVisionModel(t *testing.T) {
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("x"), fakellm.WithModels())
	cfg := filepath.Join(t.TempDir(), "picoclaw.yaml")
	if err := os.WriteFile(cfg, []byte("models:\n  vision:\n    model: qwen2.5vl:7b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runModels(t, f.URL, "models", "setup", "--locale", "en", "--config", cfg)
	if code != ExitOK || !strings.Contains(out, "qwen2.5vl:7b") {
		t.Fatalf("setup: %d\n%s\n%s", code, out, errOut)
	}
	pulled := false
	for _, r := range f.AdminRequests() {
		if r.Path == "/api/pull" && r.Body["model"] == "qwen2.5vl:7b" {
			pulled = true
		}
		if r.Path == "/api/create" && r.Body["model"] == "qwen2.5vl:7b" {
			t.Errorf("the vision model was created from a Modelfile: %s", r.Raw)
		}
	}
	if !pulled {
		t.Fatalf("vision model not pulled: %+v", f.AdminRequests())
	}
	if code, out, _ = runModels(t, f.URL, "models", "status", "--config", cfg); code != ExitOK || !strings.Contains(out, "vision") {
		t.Fatalf("status after setup: %d\n%s", code, out)
	}
}
