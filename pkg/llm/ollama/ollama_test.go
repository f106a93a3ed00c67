package ollama

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/internal/llmtest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
)

func ollamaClient(t *testing.T, f *llmtest.Fake, s *llmtest.Sleeps, mut func(*llm.Config)) *Client {
	t.Helper()
	cfg := llm.Config{Provider: llm.ProviderOllama, Model: "worker-v1:latest", BaseURL: f.Srv.URL, RetryMax: 2, MaxTokens: 512, NumCtx: 4096, MaxContext: 8192}
	if mut != nil {
		mut(&cfg)
	}
	c, err := New(cfg, llm.WithSleep(s.Sleep))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOllamaChatRequestShape(t *testing.T) {
	f := llmtest.NewFake(t, llmtest.Step{Status: 200, Body: llmtest.OllamaOK})
	c := ollamaClient(t, f, &llmtest.Sleeps{}, nil)
	resp, err := c.Chat(context.Background(), llm.Request{
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: "sys"}, {Role: llm.RoleUser, Content: "こんにちは"}},
		JSON:     true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"ok":true}` || resp.Usage.InputTokens != 21 || resp.Usage.OutputTokens != 7 || resp.Attempts != 1 || resp.Provider != "ollama" {
		t.Fatalf("unexpected response %+v", resp)
	}
	reqs := f.Requests()
	if len(reqs) != 1 || reqs[0].Method != "POST" || reqs[0].Path != "/api/chat" {
		t.Fatalf("requests = %+v", reqs)
	}
	b := reqs[0].Body
	if b["stream"] != false || b["keep_alive"] != float64(-1) || b["format"] != "json" || b["model"] != "worker-v1:latest" {
		t.Errorf("body = %s", reqs[0].Raw)
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
	f := llmtest.NewFake(t, llmtest.Step{Status: 200, Body: llmtest.OllamaOK})
	c := ollamaClient(t, f, &llmtest.Sleeps{}, func(c *llm.Config) { c.NumCtx = 0; c.MaxContext = 0 })
	if _, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	b := f.Requests()[0].Body
	if _, has := b["format"]; has {
		t.Errorf("format sent in text mode: %s", f.Requests()[0].Raw)
	}
	if b["options"].(map[string]any)["num_ctx"] != float64(llm.DefaultNumCtx) {
		t.Errorf("default num_ctx not sent: %s", f.Requests()[0].Raw)
	}
}

func TestOllamaErrorsAndRetries(t *testing.T) {
	cases := []struct {
		name     string
		steps    []llmtest.Step
		timeout  time.Duration
		wantErr  error
		attempts int
		waits    []time.Duration
	}{
		{"500 then ok", []llmtest.Step{{Status: 500, Body: `{"error":"boom"}`}, {Status: 200, Body: llmtest.OllamaOK}}, 0, nil, 2, []time.Duration{500 * time.Millisecond}},
		{"500 until retry_max", []llmtest.Step{{Status: 503, Body: `{"error":"loading"}`}}, 0, llm.ErrUnavailable, 3, []time.Duration{500 * time.Millisecond, time.Second}},
		{"429 honours Retry-After", []llmtest.Step{{Status: 429, Header: map[string]string{"Retry-After": "3"}, Body: `{"error":"busy"}`}, {Status: 200, Body: llmtest.OllamaOK}}, 0, nil, 2, []time.Duration{3 * time.Second}},
		{"401 no retry", []llmtest.Step{{Status: 401, Body: `{"error":"unauthorized"}`}}, 0, llm.ErrUnauthenticated, 1, nil},
		{"404 model missing is not retried", []llmtest.Step{{Status: 404, Body: `{"error":"model \"x\" not found, try pulling it first"}`}}, 0, llm.ErrModelUnavailable, 1, nil},
		{"malformed body", []llmtest.Step{{Status: 200, Body: `{"message":`}}, 0, llm.ErrBadResponse, 1, nil},
		{"not done", []llmtest.Step{{Status: 200, Body: `{"done":false}`}}, 0, llm.ErrBadResponse, 1, nil},
		{"timeout retried", []llmtest.Step{{Status: 200, Body: llmtest.OllamaOK, Delay: 5 * time.Second}}, 50 * time.Millisecond, llm.ErrTimeout, 3, []time.Duration{500 * time.Millisecond, time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := llmtest.NewFake(t, tc.steps...)
			s := &llmtest.Sleeps{}
			c := ollamaClient(t, f, s, nil)
			resp, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, Timeout: tc.timeout})
			llmtest.CheckAttempts(t, resp, err, tc.wantErr, tc.attempts, f, s, tc.waits)
		})
	}
}

func TestContextDeadlineStopsRetrying(t *testing.T) {
	f := llmtest.NewFake(t, llmtest.Step{Status: 429, Header: map[string]string{"Retry-After": "30"}, Body: `{"error":"busy"}`})
	s := &llmtest.Sleeps{}
	c := ollamaClient(t, f, s, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := c.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
	if !errors.Is(err, llm.ErrRateLimited) {
		t.Fatalf("err = %v, want rate limited", err)
	}
	if len(s.Waits()) != 0 || len(f.Requests()) != 1 {
		t.Errorf("waited %v with %d requests; a Retry-After beyond the deadline must not be waited for", s.Waits(), len(f.Requests()))
	}
}

func TestContextDeadlineDuringAttempt(t *testing.T) {
	f := llmtest.NewFake(t, llmtest.Step{Status: 200, Body: llmtest.OllamaOK, Delay: 5 * time.Second})
	c := ollamaClient(t, f, &llmtest.Sleeps{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
	if !errors.Is(err, llm.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want timeout", err)
	}
	if llm.Attempts(err) != 1 {
		t.Errorf("attempts = %d, want 1 (the caller's deadline ends the call)", llm.Attempts(err))
	}
}

func TestRestartRunsArgvWithoutShell(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "restarted; echo injected")
	// touch receives the whole string as one argument: a shell would split it at ';'.
	if err := runRestart(context.Background(), []string{"touch", marker}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("argv not passed as one argument: %v", err)
	}
	if err := runRestart(context.Background(), []string{"false"}); err == nil || !strings.Contains(err.Error(), "false") {
		t.Fatalf("failing restart err = %v", err)
	}
	if err := (*Restarter)(nil).Restart(context.Background(), 0, "m", "x", nil); !errors.Is(err, ErrNoRestartCommand) {
		t.Fatalf("no command: err = %v", err)
	}
}

func TestOllamaIsNotMasked(t *testing.T) {
	// Local models see the user's text unchanged; masking is for text leaving the machine.
	f := llmtest.NewFake(t, llmtest.Step{Status: 200, Body: llmtest.OllamaOK})
	c := ollamaClient(t, f, &llmtest.Sleeps{}, nil)
	if _, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "mail hanako.sato@example.jp"}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Requests()[0].Raw, "hanako.sato@example.jp") {
		t.Error("local text was altered")
	}
}

func TestCallsAreSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	f := llmtest.NewFake(t, llmtest.Step{Status: 429, Body: `{"error":"busy"}`}, llmtest.Step{Status: 200, Body: llmtest.OllamaOK})
	c, err := New(llm.Config{Provider: llm.ProviderOllama, Model: "worker-v1:latest", BaseURL: f.Srv.URL, RetryMax: 1},
		llm.WithTracerProvider(tp), llm.WithSleep((&llmtest.Sleeps{}).Sleep))
	if err != nil {
		t.Fatal(err)
	}
	ctx := jobid.WithJobID(context.Background(), "job_20261121_009")
	if _, err := c.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	// The call, and under it one client span per HTTP attempt (the 429 and the answer).
	var spans, http []sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if strings.HasPrefix(sp.Name(), "chat ") {
			spans = append(spans, sp)
		} else {
			http = append(http, sp)
		}
	}
	if len(spans) != 1 || spans[0].Name() != "chat worker-v1:latest" {
		t.Fatalf("spans = %v", spans)
	}
	if len(http) != 2 || http[0].Name() != "POST 127.0.0.1" || http[0].Parent().SpanID() != spans[0].SpanContext().SpanID() {
		t.Fatalf("HTTP spans = %v", http)
	}
	attrs := map[string]string{}
	for _, a := range spans[0].Attributes() {
		attrs[string(a.Key)] = a.Value.Emit()
	}
	// The OpenTelemetry GenAI conventions, and ours beside them.
	if attrs["job_id"] != "job_20261121_009" || attrs["gen_ai.operation.name"] != "chat" || attrs["gen_ai.system"] != "ollama" ||
		attrs["gen_ai.request.model"] != "worker-v1:latest" || attrs["gen_ai.usage.input_tokens"] != "21" || attrs["picoclaw.llm.attempts"] != "2" {
		t.Errorf("span attributes = %v", attrs)
	}
}

// BenchmarkOllamaChat measures one round trip through the adapter against a local server.
func BenchmarkOllamaChat(b *testing.B) {
	f := llmtest.NewFake(b, llmtest.Step{Status: 200, Body: llmtest.OllamaOK})
	c, err := New(llm.Config{Provider: llm.ProviderOllama, Model: "worker-v1:latest", BaseURL: f.Srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, JSON: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Chat(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

func TestOllamaToolCalls(t *testing.T) {
	newClient := func(url string) llm.Client {
		c, err := New(llm.Config{Model: "worker-v1:latest", BaseURL: url})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	llmtest.ToolRoundTrip(t, fakellm.Ollama, newClient)
	llmtest.ToolLimitOnTheWire(t, fakellm.Ollama, newClient)
}

// While tools are offered no format can be sent, so a fenced JSON answer is unwrapped.
func TestOllamaJSONWithToolsIsUnfenced(t *testing.T) {
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("```json\n{\"ok\":true}\n```"))
	c, err := New(llm.Config{Model: "worker-v1:latest", BaseURL: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	tools := []llm.ToolSpec{{Name: "git_status", Parameters: map[string]any{"type": "object", "properties": map[string]any{}}}}
	for _, choice := range []llm.ToolChoice{llm.ToolChoiceAuto, llm.ToolChoiceNone} {
		resp, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, JSON: true, Tools: tools, ToolChoice: choice})
		if err != nil {
			t.Fatal(err)
		}
		r := f.Requests()[len(f.Requests())-1]
		offered := choice == llm.ToolChoiceAuto
		if (len(r.Tools) > 0) != offered || r.JSON == offered {
			t.Errorf("choice %q: tools %v, format %v", choice, r.Tools, r.JSON)
		}
		if want := map[bool]string{true: `{"ok":true}`, false: "```json\n{\"ok\":true}\n```"}[offered]; resp.Text != want {
			t.Errorf("choice %q: text %q", choice, resp.Text)
		}
	}
}

// A Retry-After longer than any wait the client would make fails at once and says when to try
// again, instead of waiting out its own cap first.
func TestRetryAfterBeyondTheBudgetFailsAtOnce(t *testing.T) {
	f := llmtest.NewFake(t, llmtest.Step{Status: 429, Header: map[string]string{"Retry-After": "600"}, Body: `{"error":"busy"}`})
	s := &llmtest.Sleeps{}
	c := ollamaClient(t, f, s, nil)
	_, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
	var ce *llm.CallError
	if !errors.Is(err, llm.ErrRateLimited) || !errors.As(err, &ce) || ce.RetryAfter != 10*time.Minute || !strings.Contains(err.Error(), "try again after") {
		t.Fatalf("err = %v", err)
	}
	if len(s.Waits()) != 0 || len(f.Requests()) != 1 {
		t.Errorf("waited %v with %d requests", s.Waits(), len(f.Requests()))
	}
}

func TestOllamaImages(t *testing.T) {
	llmtest.ImageOnTheWire(t, fakellm.Ollama, func(url string) llm.Client {
		c, err := New(llm.Config{Model: "qwen2.5vl:7b", BaseURL: url})
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}
