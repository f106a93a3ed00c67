package llm

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// Test keys look real on purpose: the log test proves they never appear unmasked.
const (
	testOpenAIKey    = "sk-proj-T3stK3yAbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	testAnthropicKey = "sk-ant-api03-T3stK3yAbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
)

const openAIOK = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"{\"plan\":\"x\"}","refusal":null},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":30,"completion_tokens":12,"total_tokens":42}}`

const anthropicOK = `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"{\"plan\":\"y\"}"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":40,"output_tokens":9}}`

const anthropicOverloaded = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`

func cloudClient(t *testing.T, provider, url string, s *sleeps, opts ...Option) Client {
	t.Helper()
	cfg := Config{Provider: provider, Model: map[string]string{ProviderOpenAI: "gpt-4o", ProviderDeepSeek: "deepseek-chat", ProviderAnthropic: "claude-sonnet-4-5"}[provider],
		BaseURL: url, RetryMax: 2, MaxTokens: 1000}
	if provider == ProviderOpenAI || provider == ProviderDeepSeek {
		cfg.BaseURL = url + "/v1"
	}
	opts = append([]Option{WithSleep(s.sleep), WithLookupEnv(env("OPENAI_API_KEY", testOpenAIKey, "DEEPSEEK_API_KEY", testOpenAIKey, "ANTHROPIC_API_KEY", testAnthropicKey))}, opts...)
	c, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOpenAICompatibleRequestShape(t *testing.T) {
	// The SDK's environment defaults must not leak in: base URL, key, org and project come
	// only from our config.
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/should-not-be-used")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	t.Setenv("OPENAI_PROJECT_ID", "proj-from-env")
	for _, provider := range []string{ProviderOpenAI, ProviderDeepSeek} {
		t.Run(provider, func(t *testing.T) {
			f := newFake(t, step{status: 200, body: openAIOK})
			c := cloudClient(t, provider, f.srv.URL, &sleeps{})
			resp, err := c.Chat(context.Background(), Request{
				Messages: []Message{{Role: RoleSystem, Content: "you write proposals"}, {Role: RoleUser, Content: "task"}, {Role: RoleAssistant, Content: "prev"}},
				JSON:     true, MaxTokens: 321,
			})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != `{"plan":"x"}` || resp.Usage != (Usage{30, 12}) || resp.Provider != provider || resp.Attempts != 1 || !c.Cloud() {
				t.Fatalf("resp = %+v", resp)
			}
			r := f.requests()
			if len(r) != 1 || r[0].method != "POST" || r[0].path != "/v1/chat/completions" {
				t.Fatalf("requests = %+v", r)
			}
			if got := r[0].header.Get("Authorization"); got != "Bearer "+testOpenAIKey {
				t.Errorf("Authorization = %q", got)
			}
			for _, h := range []string{"OpenAI-Organization", "OpenAI-Project"} {
				if r[0].header.Get(h) != "" {
					t.Errorf("%s header leaked from the environment", h)
				}
			}
			b := r[0].body
			if b["model"] != c.Model() || b["max_tokens"] != float64(321) {
				t.Errorf("body = %s", r[0].raw)
			}
			if rf, _ := b["response_format"].(map[string]any); rf["type"] != "json_object" {
				t.Errorf("response_format = %v", b["response_format"])
			}
			msgs, _ := b["messages"].([]any)
			if len(msgs) != 3 || msgs[0].(map[string]any)["role"] != "system" || msgs[2].(map[string]any)["role"] != "assistant" {
				t.Errorf("messages = %v", msgs)
			}
		})
	}
}

func TestAnthropicRequestShape(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1/should-not-be-used")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env-should-not-be-used")
	f := newFake(t, step{status: 200, body: anthropicOK})
	c := cloudClient(t, ProviderAnthropic, f.srv.URL, &sleeps{})
	resp, err := c.Chat(context.Background(), Request{
		Messages: []Message{{Role: RoleSystem, Content: "you are Gin"}, {Role: RoleUser, Content: "task"}},
		JSON:     true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"plan":"y"}` || resp.Usage != (Usage{40, 9}) || resp.Provider != "anthropic" {
		t.Fatalf("resp = %+v", resp)
	}
	r := f.requests()
	if len(r) != 1 || r[0].path != "/v1/messages" {
		t.Fatalf("requests = %+v", r)
	}
	if r[0].header.Get("x-api-key") != testAnthropicKey {
		t.Errorf("x-api-key = %q", r[0].header.Get("x-api-key"))
	}
	if r[0].header.Get("anthropic-version") == "" {
		t.Error("anthropic-version header missing")
	}
	if r[0].header.Get("Authorization") != "" {
		t.Error("Authorization header must not be sent to Anthropic")
	}
	b := r[0].body
	if b["model"] != "claude-sonnet-4-5" || b["max_tokens"] != float64(1000) {
		t.Errorf("body = %s", r[0].raw)
	}
	sys, _ := b["system"].([]any)
	if len(sys) != 1 || !strings.Contains(sys[0].(map[string]any)["text"].(string), "you are Gin") || !strings.Contains(sys[0].(map[string]any)["text"].(string), "JSON") {
		t.Errorf("system = %v", b["system"])
	}
	msgs, _ := b["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "user" {
		t.Errorf("messages = %v", msgs)
	}
}

func TestCloudErrorsAndRetries(t *testing.T) {
	type tc struct {
		name     string
		provider string
		steps    []step
		timeout  time.Duration
		wantErr  error
		attempts int
		waits    []time.Duration
	}
	oaErr := func(code string) string {
		return `{"error":{"message":"` + code + `","type":"` + code + `","param":null,"code":"` + code + `"}}`
	}
	cases := []tc{
		{"openai 401", ProviderOpenAI, []step{{status: 401, body: oaErr("invalid_api_key")}}, 0, ErrUnauthenticated, 1, nil},
		{"openai 403", ProviderOpenAI, []step{{status: 403, body: oaErr("forbidden")}}, 0, ErrUnauthenticated, 1, nil},
		{"openai 429 retry-after then ok", ProviderOpenAI, []step{{status: 429, header: map[string]string{"Retry-After": "2"}, body: oaErr("rate_limit")}, {status: 200, body: openAIOK}}, 0, nil, 2, []time.Duration{2 * time.Second}},
		{"openai 429 retry-after-ms", ProviderOpenAI, []step{{status: 429, header: map[string]string{"retry-after-ms": "1500"}, body: oaErr("rate_limit")}}, 0, ErrRateLimited, 3, []time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond}},
		{"openai 500 non-json body", ProviderOpenAI, []step{{status: 500, header: map[string]string{"Content-Type": "text/html"}, body: "<html>oops</html>"}}, 0, ErrUnavailable, 3, []time.Duration{500 * time.Millisecond, time.Second}},
		{"openai malformed 200", ProviderOpenAI, []step{{status: 200, body: `{"choices":[`}}, 0, ErrBadResponse, 1, nil},
		{"openai no choices", ProviderOpenAI, []step{{status: 200, body: `{"id":"x","choices":[],"usage":{}}`}}, 0, ErrBadResponse, 1, nil},
		{"openai 400 rejected", ProviderOpenAI, []step{{status: 400, body: oaErr("context_length_exceeded")}}, 0, ErrRejected, 1, nil},
		{"deepseek timeout then ok", ProviderDeepSeek, []step{{status: 200, body: openAIOK, delay: 5 * time.Second}, {status: 200, body: openAIOK}}, 100 * time.Millisecond, nil, 2, []time.Duration{500 * time.Millisecond}},
		{"anthropic 401", ProviderAnthropic, []step{{status: 401, body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`}}, 0, ErrUnauthenticated, 1, nil},
		{"anthropic 529 then ok", ProviderAnthropic, []step{{status: 529, header: map[string]string{"Retry-After": "4"}, body: anthropicOverloaded}, {status: 200, body: anthropicOK}}, 0, nil, 2, []time.Duration{4 * time.Second}},
		{"anthropic 529 exhausted", ProviderAnthropic, []step{{status: 529, body: anthropicOverloaded}}, 0, ErrRateLimited, 3, []time.Duration{500 * time.Millisecond, time.Second}},
		{"anthropic 500 then ok", ProviderAnthropic, []step{{status: 500, body: `{"type":"error","error":{"type":"api_error","message":"internal"}}`}, {status: 200, body: anthropicOK}}, 0, nil, 2, []time.Duration{500 * time.Millisecond}},
		{"anthropic malformed", ProviderAnthropic, []step{{status: 200, body: `not json`}}, 0, ErrBadResponse, 1, nil},
		{"anthropic timeout exhausted", ProviderAnthropic, []step{{status: 200, body: anthropicOK, delay: 5 * time.Second}}, 50 * time.Millisecond, ErrTimeout, 3, []time.Duration{500 * time.Millisecond, time.Second}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, c.steps...)
			s := &sleeps{}
			cl := cloudClient(t, c.provider, f.srv.URL, s)
			resp, err := cl.Chat(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}, Timeout: c.timeout})
			if c.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if resp.Attempts != c.attempts {
					t.Errorf("attempts = %d, want %d", resp.Attempts, c.attempts)
				}
			} else {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				if Attempts(err) != c.attempts {
					t.Errorf("Attempts(err) = %d, want %d", Attempts(err), c.attempts)
				}
			}
			if got := len(f.requests()); got != c.attempts {
				t.Errorf("server saw %d requests, want %d", got, c.attempts)
			}
			if got := s.waits(); !equalDurations(got, c.waits) {
				t.Errorf("waits = %v, want %v", got, c.waits)
			}
		})
	}
}

func TestLocalOnlyRefusesCloud(t *testing.T) {
	for _, p := range []string{ProviderOpenAI, ProviderDeepSeek, ProviderAnthropic} {
		f := newFake(t, step{status: 200, body: openAIOK})
		c := cloudClient(t, p, f.srv.URL, &sleeps{})
		_, err := c.Chat(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}, LocalOnly: true})
		if !errors.Is(err, ErrLocalOnly) || Code(err) != "local_only" {
			t.Errorf("%s: err = %v, want ErrLocalOnly", p, err)
		}
		if len(f.requests()) != 0 {
			t.Errorf("%s: a request left for the cloud under local_only", p)
		}
	}
	// Local providers answer under local_only.
	if _, err := NewOffline().Chat(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}, LocalOnly: true}); err != nil {
		t.Errorf("offline under local_only: %v", err)
	}
}

// secretTable is text that must never reach a cloud provider as-is.
var secretTable = []struct{ name, text, leak string }{
	{"openai key", "use sk-proj-ZZabcdefghijklmnopqrstuvwx1234", "ZZabcdefghijklmnopqrstuvwx1234"},
	{"anthropic key", "ANTHROPIC_API_KEY=sk-ant-api03-QQabcdefghijklmnopqrstu", "QQabcdefghijklmnopqrstu"},
	{"bearer token", "Authorization: Bearer abcDEF123456ghiJKL789", "abcDEF123456ghiJKL789"},
	{"password", "db password: hunter2hunter2", "hunter2hunter2"},
	{"private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAA"},
	{"email", "連絡先は hanako.sato@example.jp です", "hanako.sato@example.jp"},
	{"mobile phone", "電話 090-1234-5678 まで", "090-1234-5678"},
	{"international phone", "call +81 90 1234 5678", "1234 5678"},
	{"landline", "代表 03-1234-5678", "03-1234-5678"},
}

func TestCloudCallsAreMasked(t *testing.T) {
	for _, p := range []string{ProviderOpenAI, ProviderAnthropic} {
		t.Run(p, func(t *testing.T) {
			body := openAIOK
			if p == ProviderAnthropic {
				body = anthropicOK
			}
			f := newFake(t, step{status: 200, body: body})
			c := cloudClient(t, p, f.srv.URL, &sleeps{})
			var msgs []Message
			for _, s := range secretTable {
				msgs = append(msgs, Message{Role: RoleUser, Content: s.text})
			}
			msgs = append(msgs, Message{Role: RoleSystem, Content: "system with token=abcdef123456"})
			if _, err := c.Chat(context.Background(), Request{Messages: msgs}); err != nil {
				t.Fatal(err)
			}
			raw := f.requests()[0].raw
			for _, s := range secretTable {
				if strings.Contains(raw, s.leak) {
					t.Errorf("%s leaked to %s: %q", s.name, p, s.leak)
				}
			}
			if strings.Contains(raw, "abcdef123456") {
				t.Error("system prompt secret leaked")
			}
			if !strings.Contains(raw, "連絡先は") {
				t.Error("plain text around secrets must survive masking")
			}
		})
	}
}

func TestOllamaIsNotMasked(t *testing.T) {
	// Local models see the user's text unchanged; masking is for text leaving the machine.
	f := newFake(t, step{status: 200, body: ollamaOK})
	c := ollamaClient(t, f, &sleeps{}, nil)
	if _, err := c.Chat(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "mail hanako.sato@example.jp"}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.requests()[0].raw, "hanako.sato@example.jp") {
		t.Error("local text was altered")
	}
}

func TestNoAPIKey(t *testing.T) {
	_, err := New(Config{Provider: ProviderOpenAI, Model: "gpt-4o"}, WithLookupEnv(env()))
	if !errors.Is(err, ErrNoAPIKey) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("err = %v", err)
	}
}

func TestLogsNeverContainKeys(t *testing.T) {
	var buf bytes.Buffer
	logger := telemetry.NewLogger(&buf, "debug", "test")
	oa := newFake(t, step{status: 401, body: `{"error":{"message":"Incorrect API key provided: ` + testOpenAIKey + `","type":"invalid_request_error","code":"invalid_api_key"}}`})
	an := newFake(t, step{status: 529, body: anthropicOverloaded}, step{status: 200, body: anthropicOK})
	s := &sleeps{}
	var calls []Call
	obs := WithObserver(func(_ context.Context, c Call) { calls = append(calls, c) })
	c1 := cloudClient(t, ProviderOpenAI, oa.srv.URL, s, WithLogger(logger), obs)
	c2 := cloudClient(t, ProviderAnthropic, an.srv.URL, s, WithLogger(logger), obs)
	_, err1 := c1.Chat(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}})
	if err1 == nil {
		t.Fatal("want 401 error")
	}
	logger.Info("caller logs the error", "error", err1)
	if _, err := c2.Chat(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, key := range []string{testOpenAIKey, testAnthropicKey, "T3stK3yAbCdEfGhIjKlMnOp"} {
		if strings.Contains(out, key) || strings.Contains(err1.Error(), key) {
			t.Fatalf("key %q appears unmasked in logs or errors:\n%s", key, out)
		}
	}
	for _, ev := range []string{`"msg":"llm.call"`, `"msg":"llm.call_failed"`, `"msg":"llm.retry"`, `"input_tokens":40`} {
		if !strings.Contains(out, ev) {
			t.Errorf("log lacks %s:\n%s", ev, out)
		}
	}
	if len(calls) != 2 || calls[1].Usage.InputTokens != 40 || calls[1].Attempts != 2 || Code(calls[0].Err) != "unauthenticated" {
		t.Errorf("observer calls = %+v", calls)
	}
}
