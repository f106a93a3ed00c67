package llm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const ollamaOK = `{"model":"worker-v1:latest","created_at":"2026-11-21T00:00:00Z","message":{"role":"assistant","content":"{\"ok\":true}"},"done":true,"done_reason":"stop","total_duration":1000,"prompt_eval_count":21,"eval_count":7}`

func ollamaClient(t *testing.T, f *fakeProvider, s *sleeps, mut func(*Config)) *Ollama {
	t.Helper()
	cfg := Config{Provider: ProviderOllama, Model: "worker-v1:latest", BaseURL: f.srv.URL, RetryMax: 2, MaxTokens: 512, NumCtx: 4096, MaxContext: 8192}
	if mut != nil {
		mut(&cfg)
	}
	c, err := NewOllama(cfg, WithSleep(s.sleep))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOllamaChatRequestShape(t *testing.T) {
	f := newFake(t, step{status: 200, body: ollamaOK})
	c := ollamaClient(t, f, &sleeps{}, nil)
	resp, err := c.Chat(context.Background(), Request{
		Messages: []Message{{Role: RoleSystem, Content: "sys"}, {Role: RoleUser, Content: "こんにちは"}},
		JSON:     true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"ok":true}` || resp.Usage.InputTokens != 21 || resp.Usage.OutputTokens != 7 || resp.Attempts != 1 || resp.Provider != "ollama" {
		t.Fatalf("unexpected response %+v", resp)
	}
	reqs := f.requests()
	if len(reqs) != 1 || reqs[0].method != "POST" || reqs[0].path != "/api/chat" {
		t.Fatalf("requests = %+v", reqs)
	}
	b := reqs[0].body
	if b["stream"] != false || b["keep_alive"] != float64(-1) || b["format"] != "json" || b["model"] != "worker-v1:latest" {
		t.Errorf("body = %s", reqs[0].raw)
	}
	opts, _ := b["options"].(map[string]any)
	if opts["num_ctx"] != float64(4096) || opts["num_predict"] != float64(512) {
		t.Errorf("options = %v", opts)
	}
	msgs, _ := b["messages"].([]any)
	if len(msgs) != 2 || msgs[1].(map[string]any)["content"] != "こんにちは" {
		t.Errorf("messages = %v", msgs)
	}
}

func TestOllamaTextModeOmitsFormatButKeepsNumCtx(t *testing.T) {
	f := newFake(t, step{status: 200, body: ollamaOK})
	c := ollamaClient(t, f, &sleeps{}, func(c *Config) { c.NumCtx = 0; c.MaxContext = 0 })
	if _, err := c.Chat(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	b := f.requests()[0].body
	if _, has := b["format"]; has {
		t.Errorf("format sent in text mode: %s", f.requests()[0].raw)
	}
	if b["options"].(map[string]any)["num_ctx"] != float64(DefaultNumCtx) {
		t.Errorf("default num_ctx not sent: %s", f.requests()[0].raw)
	}
}

func TestOllamaErrorsAndRetries(t *testing.T) {
	cases := []struct {
		name     string
		steps    []step
		timeout  time.Duration
		wantErr  error
		attempts int
		waits    []time.Duration
	}{
		{"500 then ok", []step{{status: 500, body: `{"error":"boom"}`}, {status: 200, body: ollamaOK}}, 0, nil, 2, []time.Duration{500 * time.Millisecond}},
		{"500 until retry_max", []step{{status: 503, body: `{"error":"loading"}`}}, 0, ErrUnavailable, 3, []time.Duration{500 * time.Millisecond, time.Second}},
		{"429 honours Retry-After", []step{{status: 429, header: map[string]string{"Retry-After": "3"}, body: `{"error":"busy"}`}, {status: 200, body: ollamaOK}}, 0, nil, 2, []time.Duration{3 * time.Second}},
		{"401 no retry", []step{{status: 401, body: `{"error":"unauthorized"}`}}, 0, ErrUnauthenticated, 1, nil},
		{"404 model missing is rejected", []step{{status: 404, body: `{"error":"model \"x\" not found"}`}}, 0, ErrRejected, 1, nil},
		{"malformed body", []step{{status: 200, body: `{"message":`}}, 0, ErrBadResponse, 1, nil},
		{"not done", []step{{status: 200, body: `{"done":false}`}}, 0, ErrBadResponse, 1, nil},
		{"timeout retried", []step{{status: 200, body: ollamaOK, delay: 5 * time.Second}}, 50 * time.Millisecond, ErrTimeout, 3, []time.Duration{500 * time.Millisecond, time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.steps...)
			s := &sleeps{}
			c := ollamaClient(t, f, s, nil)
			resp, err := c.Chat(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}, Timeout: tc.timeout})
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if resp.Attempts != tc.attempts {
					t.Errorf("attempts = %d, want %d", resp.Attempts, tc.attempts)
				}
			} else {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if Attempts(err) != tc.attempts {
					t.Errorf("Attempts(err) = %d, want %d", Attempts(err), tc.attempts)
				}
			}
			if got := len(f.requests()); got != tc.attempts {
				t.Errorf("server saw %d requests, want %d", got, tc.attempts)
			}
			if got := s.waits(); !equalDurations(got, tc.waits) {
				t.Errorf("waits = %v, want %v", got, tc.waits)
			}
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestContextDeadlineStopsRetrying(t *testing.T) {
	f := newFake(t, step{status: 429, header: map[string]string{"Retry-After": "30"}, body: `{"error":"busy"}`})
	s := &sleeps{}
	c := ollamaClient(t, f, s, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := c.Chat(ctx, Request{Messages: []Message{{Role: RoleUser, Content: "x"}}})
	if !errors.Is(err, ErrRateLimited) {
		t.Fatalf("err = %v, want rate limited", err)
	}
	if len(s.waits()) != 0 || len(f.requests()) != 1 {
		t.Errorf("waited %v with %d requests; a Retry-After beyond the deadline must not be waited for", s.waits(), len(f.requests()))
	}
}

func TestContextDeadlineDuringAttempt(t *testing.T) {
	f := newFake(t, step{status: 200, body: ollamaOK, delay: 5 * time.Second})
	c := ollamaClient(t, f, &sleeps{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Chat(ctx, Request{Messages: []Message{{Role: RoleUser, Content: "x"}}})
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want timeout", err)
	}
	if Attempts(err) != 1 {
		t.Errorf("attempts = %d, want 1 (the caller's deadline ends the call)", Attempts(err))
	}
}

const tagsBody = `{"models":[{"name":"worker-v1:latest","model":"worker-v1:latest","size":1}]}`

func TestOllamaHealth(t *testing.T) {
	cases := []struct {
		name    string
		tags    string
		show    string
		numCtx  int
		maxCtx  int
		wantErr bool
		want    Health
	}{
		{"healthy", tagsBody, `{"parameters":"num_ctx 4096\nstop \"<|im_end|>\"","model_info":{"qwen2.context_length":32768}}`, 4096, 8192, false, Health{ModelPresent: true, ContextLength: 32768, ModelNumCtx: 4096, NumCtx: 4096}},
		{"missing model", `{"models":[{"name":"other:latest"}]}`, `{}`, 4096, 8192, true, Health{NumCtx: 4096}},
		{"model file num_ctx above max_context", tagsBody, `{"parameters":"num_ctx 32768","model_info":{"llama.context_length":131072}}`, 4096, 8192, true, Health{ModelPresent: true, ContextLength: 131072, ModelNumCtx: 32768, NumCtx: 4096}},
		{"num_ctx above trained length", tagsBody, `{"model_info":{"llama.context_length":2048}}`, 4096, 8192, true, Health{ModelPresent: true, ContextLength: 2048, NumCtx: 4096}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var show *fakeProvider
			tags := newFake(t, step{status: 200, body: tc.tags})
			show = newFake(t, step{status: 200, body: tc.show})
			// One server that routes by path, speaking both endpoints.
			mux := newFake(t, step{status: 200})
			mux.srv.Config.Handler = routeByPath(map[string]*fakeProvider{"/api/tags": tags, "/api/show": show})
			c := ollamaClient(t, mux, &sleeps{}, func(c *Config) { c.NumCtx = tc.numCtx; c.MaxContext = tc.maxCtx })
			h, err := c.Health(context.Background())
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrModelUnavailable) {
				t.Errorf("err = %v, want ErrModelUnavailable", err)
			}
			if h != tc.want {
				t.Errorf("health = %+v, want %+v", h, tc.want)
			}
			if r := tags.requests(); len(r) != 1 || r[0].method != "GET" {
				t.Errorf("tags requests = %+v", r)
			}
			if r := show.requests(); len(r) == 1 && (r[0].method != "POST" || r[0].body["model"] != "worker-v1:latest") {
				t.Errorf("show request = %+v", r[0])
			}
		})
	}
}

func TestOllamaHealthUnreachable(t *testing.T) {
	f := newFake(t, step{status: 200})
	f.srv.Close()
	c := ollamaClient(t, f, &sleeps{}, nil)
	if _, err := c.Health(context.Background()); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want unavailable", err)
	}
}

func TestOllamaRestartRunsArgvWithoutShell(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "restarted; echo injected")
	f := newFake(t, step{status: 200})
	// touch receives the whole string as one argument: a shell would split it at ';'.
	c := ollamaClient(t, f, &sleeps{}, func(c *Config) { c.RestartCommand = []string{"touch", marker} })
	if err := c.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("argv not passed as one argument: %v", err)
	}
	c2 := ollamaClient(t, f, &sleeps{}, func(c *Config) { c.RestartCommand = []string{"false"} })
	if err := c2.Restart(context.Background()); err == nil || !strings.Contains(err.Error(), "false") {
		t.Fatalf("failing restart err = %v", err)
	}
	c3 := ollamaClient(t, f, &sleeps{}, nil)
	if err := c3.Restart(context.Background()); !errors.Is(err, ErrNoRestartCommand) {
		t.Fatalf("err = %v", err)
	}
}

func TestOllamaEnsureHealthyRestartsOnce(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "restarted")
	f := newFake(t, step{status: 200, body: `{"models":[]}`})
	s := &sleeps{}
	c := ollamaClient(t, f, s, func(c *Config) { c.RestartCommand = []string{"touch", marker} })
	_, err := c.EnsureHealthy(context.Background(), time.Second)
	if !errors.Is(err, ErrModelUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if _, serr := os.Stat(marker); serr != nil {
		t.Fatal("restart command did not run")
	}
	if len(f.requests()) != 2 || len(s.waits()) != 1 {
		t.Errorf("requests = %d waits = %v, want one check, restart, one re-check", len(f.requests()), s.waits())
	}
}
