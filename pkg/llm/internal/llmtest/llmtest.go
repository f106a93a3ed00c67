// Package llmtest is the fake provider server the provider packages' tests share: it serves
// scripted answers in the vendors' wire format and records every request.
package llmtest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
)

// Step is one scripted answer of a fake provider.
type Step struct {
	Status int
	Header map[string]string
	Body   string
	// delay holds the answer back (until the client gives up, if longer than its timeout).
	Delay time.Duration
}

// Recorded is one request the fake received.
type Recorded struct {
	Method string
	Path   string
	Header http.Header
	Body   map[string]any
	Raw    string
}

// Fake serves the scripted steps in order (the last one repeats) and records every
// request it receives.
type Fake struct {
	t     testing.TB
	mu    sync.Mutex
	steps []Step
	reqs  []Recorded
	Srv   *httptest.Server
}

// NewFake starts a fake provider serving steps; it stops with the test.
func NewFake(t testing.TB, steps ...Step) *Fake {
	t.Helper()
	f := &Fake{t: t, steps: steps}
	f.Srv = httptest.NewServer(f)
	t.Cleanup(f.Srv.Close)
	return f
}

// ServeHTTP answers with the next step.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := Recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: string(raw)}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &rec.Body)
	}
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, rec)
	st := f.steps[min(n, len(f.steps)-1)]
	f.mu.Unlock()
	if st.Delay > 0 {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(st.Delay):
		}
	}
	for k, v := range st.Header {
		w.Header().Set(k, v)
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(st.Status)
	_, _ = io.WriteString(w, st.Body)
}

// Requests returns what the fake received so far.
func (f *Fake) Requests() []Recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Recorded(nil), f.reqs...)
}

// Sleeps records the waits between attempts instead of sleeping.
type Sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

// Sleep records d (an llm.SleepFunc).
func (s *Sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Waits returns the recorded waits.
func (s *Sleeps) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// Env is a lookupEnv over the key/value pairs kv.
func Env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// EqualDurations compares two lists of waits.
func EqualDurations(a, b []time.Duration) bool {
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

// Answers in the vendors' wire formats, and test keys that look real on purpose: the log tests
// prove they never appear unmasked.
const (
	OllamaOK            = `{"model":"worker-v1:latest","created_at":"2026-11-21T00:00:00Z","message":{"role":"assistant","content":"{\"ok\":true}"},"done":true,"done_reason":"stop","total_duration":1000,"prompt_eval_count":21,"eval_count":7}`
	OpenAIOK            = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"{\"plan\":\"x\"}","refusal":null},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":30,"completion_tokens":12,"total_tokens":42}}`
	AnthropicOK         = `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"{\"plan\":\"y\"}"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":40,"output_tokens":9}}`
	AnthropicOverloaded = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	TestOpenAIKey       = "sk-proj-T3stK3yAbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	TestAnthropicKey    = "sk-ant-api03-T3stK3yAbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
)

// CloudConfig is the configuration of a test client of a cloud provider served at url (the
// provider's fake), with the test keys from a lookupEnv and s recording the waits.
func CloudConfig(provider, url string, s *Sleeps) (llm.Config, []llm.Option) {
	cfg := llm.Config{Provider: provider, Model: map[string]string{llm.ProviderOpenAI: "gpt-4o", llm.ProviderDeepSeek: "deepseek-chat", llm.ProviderAnthropic: "claude-sonnet-4-5"}[provider],
		BaseURL: url, RetryMax: 2, MaxTokens: 1000}
	if provider == llm.ProviderOpenAI || provider == llm.ProviderDeepSeek {
		cfg.BaseURL = url + "/v1"
	}
	return cfg, []llm.Option{llm.WithSleep(s.Sleep),
		llm.WithLookupEnv(Env("OPENAI_API_KEY", TestOpenAIKey, "DEEPSEEK_API_KEY", TestOpenAIKey, "ANTHROPIC_API_KEY", TestAnthropicKey))}
}

// NewClient is newClient (a provider package's New) with CloudConfig, then opts.
func NewClient(t testing.TB, newClient func(llm.Config, ...llm.Option) (llm.Client, error), provider, url string, s *Sleeps, opts ...llm.Option) llm.Client {
	t.Helper()
	cfg, base := CloudConfig(provider, url, s)
	c, err := newClient(cfg, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// CheckAttempts checks a call's outcome against a case of a retry table: wantErr (nil for
// success), how many attempts the call and the fake f counted, and the waits s recorded between
// them.
func CheckAttempts(t *testing.T, resp *llm.Response, err, wantErr error, attempts int, f *Fake, s *Sleeps, waits []time.Duration) {
	t.Helper()
	if wantErr == nil {
		if err != nil {
			t.Fatal(err)
		}
		if resp.Attempts != attempts {
			t.Errorf("attempts = %d, want %d", resp.Attempts, attempts)
		}
	} else {
		if !errors.Is(err, wantErr) {
			t.Fatalf("err = %v, want %v", err, wantErr)
		}
		if llm.Attempts(err) != attempts {
			t.Errorf("Attempts(err) = %d, want %d", llm.Attempts(err), attempts)
		}
	}
	if got := len(f.Requests()); got != attempts {
		t.Errorf("server saw %d requests, want %d", got, attempts)
	}
	if got := s.Waits(); !EqualDurations(got, waits) {
		t.Errorf("waits = %v, want %v", got, waits)
	}
}

// ToolRoundTrip runs llm.RunTools with the client newClient builds for a fakellm server of
// wire (fakellm.OpenAI, Anthropic or Ollama), scripted to ask for two tools at once and then
// to answer, and checks what went over the wire: the tools offered, the calls echoed back with
// their ids, and results holding what the tools returned (masked for a cloud provider).
func ToolRoundTrip(t *testing.T, wire string, newClient func(url string) llm.Client) {
	t.Helper()
	f := fakellm.Start(t, wire, fakellm.Script(
		fakellm.UseTools(fakellm.Call("read_file", map[string]any{"path": "calc.go"}), fakellm.Call("search", map[string]any{"query": "Add"})),
		fakellm.Answer{Content: `{"plan":"done"}`}))
	c := newClient(f.URL)
	specs := []llm.ToolSpec{
		{Name: "read_file", Description: "Read a file.", Parameters: map[string]any{"type": "object",
			"properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []string{"path"}}},
		{Name: "search", Description: "Search the files.", Parameters: map[string]any{"type": "object",
			"properties": map[string]any{"query": map[string]any{"type": "string"}}, "required": []string{"query"}}},
	}
	results := map[string]string{
		"read_file": "package calc\n\nfunc Add(a, b int) int { return a + b } // owner taro@example.com\n",
		"search":    "calc.go:3: func Add(a, b int) int",
	}
	var ran []llm.ToolCall
	run, err := llm.RunTools(context.Background(), c, llm.Request{
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: "You write proposals."}, {Role: llm.RoleUser, Content: "fix Add"}},
		JSON:     true,
	}, llm.Toolbox{Specs: specs, Limits: llm.ToolLimits{MaxCalls: 8}, Execute: func(_ context.Context, call llm.ToolCall) (string, error) {
		ran = append(ran, call)
		return results[call.Name], nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if run.Response.Text != `{"plan":"done"}` || run.ToolCalls != 2 || run.ModelCalls != 2 || len(ran) != 2 {
		t.Fatalf("run %+v, response %+v", run, run.Response)
	}
	if ran[0].Name != "read_file" || ran[0].Arguments != `{"path":"calc.go"}` || ran[1].Name != "search" || ran[0].ID == "" || ran[0].ID == ran[1].ID {
		t.Errorf("calls run: %+v", ran)
	}
	reqs := f.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	for i, r := range reqs {
		if len(r.Tools) != 2 || r.Tools[0].Name != "read_file" || r.Tools[0].Description != "Read a file." || r.Tools[0].Parameters["required"] == nil || !r.ToolsAllowed() {
			t.Errorf("request %d offers %+v (choice %q)", i, r.Tools, r.ToolChoice)
		}
	}
	var echoed []fakellm.ToolCall
	for _, m := range reqs[1].Messages {
		echoed = append(echoed, m.ToolCalls...)
	}
	got := reqs[1].ToolResults()
	if len(echoed) != 2 || echoed[0].ID != ran[0].ID || echoed[1].ID != ran[1].ID || echoed[0].Arguments != `{"path":"calc.go"}` {
		t.Errorf("calls echoed back: %+v", echoed)
	}
	if len(got) != 2 || got[0].CallID != ran[0].ID || got[0].Name != "read_file" || got[1].CallID != ran[1].ID || got[1].Content != results["search"] {
		t.Fatalf("results sent back: %+v", got)
	}
	if !strings.Contains(got[0].Content, "func Add(a, b int) int { return a + b }") {
		t.Errorf("the model did not receive the file: %q", got[0].Content)
	}
	if masked := !strings.Contains(got[0].Content, "taro@example.com"); masked != c.Cloud() {
		t.Errorf("tool result masked = %v for a client with cloud = %v", masked, c.Cloud())
	}
}

// ToolLimitOnTheWire runs llm.RunTools against a fakellm server of wire whose model asks for a
// tool in every answer: exactly max_calls tools run, then one last request that does not allow
// tools, which the fake accepts as the provider would.
func ToolLimitOnTheWire(t *testing.T, wire string, newClient func(url string) llm.Client) {
	t.Helper()
	f := fakellm.Start(t, wire, fakellm.Script(fakellm.UseTools(fakellm.Call("git_status", map[string]any{}))))
	c := newClient(f.URL)
	runs := 0
	run, err := llm.RunTools(context.Background(), c, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "status?"}}},
		llm.Toolbox{Specs: []llm.ToolSpec{{Name: "git_status", Description: "Show git status.", Parameters: map[string]any{"type": "object", "properties": map[string]any{}}}},
			Limits: llm.ToolLimits{MaxCalls: 2}, Execute: func(context.Context, llm.ToolCall) (string, error) { runs++; return "clean", nil }})
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if runs != 2 || len(reqs) != 3 || run.StopReason != llm.ToolStopMaxCalls {
		t.Fatalf("tools run %d, requests %d, stop %q", runs, len(reqs), run.StopReason)
	}
	if !reqs[0].ToolsAllowed() || !reqs[1].ToolsAllowed() || reqs[2].ToolsAllowed() {
		t.Errorf("tools allowed per request: %v %v %v", reqs[0].ToolsAllowed(), reqs[1].ToolsAllowed(), reqs[2].ToolsAllowed())
	}
	last := reqs[2].Messages[len(reqs[2].Messages)-1]
	if !strings.Contains(last.Content, "Tool limit reached") || len(reqs[2].ToolResults()) != 2 {
		t.Errorf("last request ends with %+v, results %+v", last, reqs[2].ToolResults())
	}
}

// ImageOnTheWire sends a user message with a caption and a PNG through the client newClient
// builds for a fakellm server of wire and checks the picture arrived as that wire carries it:
// the same bytes in base64, with the media type where the wire names one.
func ImageOnTheWire(t *testing.T, wire string, newClient func(url string) llm.Client) {
	t.Helper()
	f := fakellm.Start(t, wire, fakellm.Reply("a cat"))
	c := newClient(f.URL)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR picture bytes")
	resp, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You describe pictures."},
		{Role: llm.RoleUser, Content: "what is this?", Images: []llm.Image{{Data: png, MIMEType: "image/png"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "a cat" {
		t.Errorf("answer %q", resp.Text)
	}
	reqs := f.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d", len(reqs))
	}
	last := reqs[0].Messages[len(reqs[0].Messages)-1]
	if last.Role != "user" || last.Content != "what is this?" || len(last.Images) != 1 || last.Images[0] != base64.StdEncoding.EncodeToString(png) {
		t.Fatalf("user message on the wire: %+v", last)
	}
	wantTypes := []string{"image/png"}
	if wire == fakellm.Ollama {
		wantTypes = nil
	}
	if !slices.Equal(last.ImageTypes, wantTypes) {
		t.Errorf("image types %v, want %v", last.ImageTypes, wantTypes)
	}
}
