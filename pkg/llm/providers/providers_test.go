package providers

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/internal/llmtest"

	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

func cloudClient(t *testing.T, provider, url string, s *llmtest.Sleeps, opts ...llm.Option) llm.Client {
	return llmtest.NewClient(t, New, provider, url, s, opts...)
}

func TestCloudErrorsAndRetries(t *testing.T) {
	type tc struct {
		name     string
		provider string
		steps    []llmtest.Step
		timeout  time.Duration
		wantErr  error
		attempts int
		waits    []time.Duration
	}
	oaErr := func(code string) string {
		return `{"error":{"message":"` + code + `","type":"` + code + `","param":null,"code":"` + code + `"}}`
	}
	cases := []tc{
		{"openai 401", llm.ProviderOpenAI, []llmtest.Step{{Status: 401, Body: oaErr("invalid_api_key")}}, 0, llm.ErrUnauthenticated, 1, nil},
		{"openai 403", llm.ProviderOpenAI, []llmtest.Step{{Status: 403, Body: oaErr("forbidden")}}, 0, llm.ErrUnauthenticated, 1, nil},
		{"openai 429 retry-after then ok", llm.ProviderOpenAI, []llmtest.Step{{Status: 429, Header: map[string]string{"Retry-After": "2"}, Body: oaErr("rate_limit")}, {Status: 200, Body: llmtest.OpenAIOK}}, 0, nil, 2, []time.Duration{2 * time.Second}},
		{"openai 429 retry-after-ms", llm.ProviderOpenAI, []llmtest.Step{{Status: 429, Header: map[string]string{"retry-after-ms": "1500"}, Body: oaErr("rate_limit")}}, 0, llm.ErrRateLimited, 3, []time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond}},
		{"openai 500 non-json body", llm.ProviderOpenAI, []llmtest.Step{{Status: 500, Header: map[string]string{"Content-Type": "text/html"}, Body: "<html>oops</html>"}}, 0, llm.ErrUnavailable, 3, []time.Duration{500 * time.Millisecond, time.Second}},
		{"openai malformed 200", llm.ProviderOpenAI, []llmtest.Step{{Status: 200, Body: `{"choices":[`}}, 0, llm.ErrBadResponse, 1, nil},
		{"openai no choices", llm.ProviderOpenAI, []llmtest.Step{{Status: 200, Body: `{"id":"x","choices":[],"usage":{}}`}}, 0, llm.ErrBadResponse, 1, nil},
		{"openai 400 rejected", llm.ProviderOpenAI, []llmtest.Step{{Status: 400, Body: oaErr("context_length_exceeded")}}, 0, llm.ErrRejected, 1, nil},
		{"deepseek timeout then ok", llm.ProviderDeepSeek, []llmtest.Step{{Status: 200, Body: llmtest.OpenAIOK, Delay: 5 * time.Second}, {Status: 200, Body: llmtest.OpenAIOK}}, 100 * time.Millisecond, nil, 2, []time.Duration{500 * time.Millisecond}},
		{"anthropic 401", llm.ProviderAnthropic, []llmtest.Step{{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`}}, 0, llm.ErrUnauthenticated, 1, nil},
		{"anthropic 529 then ok", llm.ProviderAnthropic, []llmtest.Step{{Status: 529, Header: map[string]string{"Retry-After": "4"}, Body: llmtest.AnthropicOverloaded}, {Status: 200, Body: llmtest.AnthropicOK}}, 0, nil, 2, []time.Duration{4 * time.Second}},
		{"anthropic 529 exhausted", llm.ProviderAnthropic, []llmtest.Step{{Status: 529, Body: llmtest.AnthropicOverloaded}}, 0, llm.ErrRateLimited, 3, []time.Duration{500 * time.Millisecond, time.Second}},
		{"anthropic 500 then ok", llm.ProviderAnthropic, []llmtest.Step{{Status: 500, Body: `{"type":"error","error":{"type":"api_error","message":"internal"}}`}, {Status: 200, Body: llmtest.AnthropicOK}}, 0, nil, 2, []time.Duration{500 * time.Millisecond}},
		{"anthropic malformed", llm.ProviderAnthropic, []llmtest.Step{{Status: 200, Body: `not json`}}, 0, llm.ErrBadResponse, 1, nil},
		{"anthropic timeout exhausted", llm.ProviderAnthropic, []llmtest.Step{{Status: 200, Body: llmtest.AnthropicOK, Delay: 5 * time.Second}}, 50 * time.Millisecond, llm.ErrTimeout, 3, []time.Duration{500 * time.Millisecond, time.Second}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := llmtest.NewFake(t, c.steps...)
			s := &llmtest.Sleeps{}
			cl := cloudClient(t, c.provider, f.Srv.URL, s)
			resp, err := cl.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, Timeout: c.timeout})
			llmtest.CheckAttempts(t, resp, err, c.wantErr, c.attempts, f, s, c.waits)
		})
	}
}

// TestProviderReasonIsKept: a permanent refusal keeps the provider's own message (from the
// error body of each wire) for the user, secrets masked.
func TestProviderReasonIsKept(t *testing.T) {
	for provider, body := range map[string]string{
		llm.ProviderOpenAI:    `{"error":{"message":"This model's maximum context length is 128000 tokens (key sk-proj-T3stK3yAbCdEfGhIjKlMnOpQrStUvWxYz0123456789)","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
		llm.ProviderAnthropic: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`,
	} {
		f := llmtest.NewFake(t, llmtest.Step{Status: 400, Body: body})
		cl := cloudClient(t, provider, f.Srv.URL, &llmtest.Sleeps{})
		_, err := cl.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
		got := llm.ProviderMessage(err)
		if !errors.Is(err, llm.ErrRejected) || !strings.Contains(got, "maximum") || strings.Contains(got, "T3stK3y") {
			t.Errorf("%s: err %v, provider message %q", provider, err, got)
		}
	}
}

func TestLocalOnlyRefusesCloud(t *testing.T) {
	for _, p := range []string{llm.ProviderOpenAI, llm.ProviderDeepSeek, llm.ProviderAnthropic} {
		f := llmtest.NewFake(t, llmtest.Step{Status: 200, Body: llmtest.OpenAIOK})
		c := cloudClient(t, p, f.Srv.URL, &llmtest.Sleeps{})
		_, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, LocalOnly: true})
		if !errors.Is(err, llm.ErrLocalOnly) || llm.Code(err) != "local_only" {
			t.Errorf("%s: err = %v, want llm.ErrLocalOnly", p, err)
		}
		if len(f.Requests()) != 0 {
			t.Errorf("%s: a request left for the cloud under local_only", p)
		}
	}
	// Local providers answer under local_only.
	if _, err := llm.NewOffline().Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, LocalOnly: true}); err != nil {
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
	for _, p := range []string{llm.ProviderOpenAI, llm.ProviderAnthropic} {
		t.Run(p, func(t *testing.T) {
			body := llmtest.OpenAIOK
			if p == llm.ProviderAnthropic {
				body = llmtest.AnthropicOK
			}
			f := llmtest.NewFake(t, llmtest.Step{Status: 200, Body: body})
			c := cloudClient(t, p, f.Srv.URL, &llmtest.Sleeps{})
			var msgs []llm.Message
			for _, s := range secretTable {
				msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: s.text})
			}
			msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: "system with token=abcdef123456"})
			if _, err := c.Chat(context.Background(), llm.Request{Messages: msgs}); err != nil {
				t.Fatal(err)
			}
			raw := f.Requests()[0].Raw
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

func TestNoAPIKey(t *testing.T) {
	_, err := New(llm.Config{Provider: llm.ProviderOpenAI, Model: "gpt-4o"}, llm.WithLookupEnv(llmtest.Env()))
	if !errors.Is(err, llm.ErrNoAPIKey) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("err = %v", err)
	}
}

func TestLogsNeverContainKeys(t *testing.T) {
	var buf bytes.Buffer
	logger := telemetry.NewLogger(&buf, "debug", "test")
	oa := llmtest.NewFake(t, llmtest.Step{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + llmtest.TestOpenAIKey + `","type":"invalid_request_error","code":"invalid_api_key"}}`})
	an := llmtest.NewFake(t, llmtest.Step{Status: 529, Body: llmtest.AnthropicOverloaded}, llmtest.Step{Status: 200, Body: llmtest.AnthropicOK})
	s := &llmtest.Sleeps{}
	var calls []llm.Call
	obs := llm.WithObserver(func(_ context.Context, c llm.Call) { calls = append(calls, c) })
	c1 := cloudClient(t, llm.ProviderOpenAI, oa.Srv.URL, s, llm.WithLogger(logger), obs)
	c2 := cloudClient(t, llm.ProviderAnthropic, an.Srv.URL, s, llm.WithLogger(logger), obs)
	_, err1 := c1.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
	if err1 == nil {
		t.Fatal("want 401 error")
	}
	logger.Info("caller logs the error", "error", err1)
	if _, err := c2.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, key := range []string{llmtest.TestOpenAIKey, llmtest.TestAnthropicKey, "T3stK3yAbCdEfGhIjKlMnOp"} {
		if strings.Contains(out, key) || strings.Contains(err1.Error(), key) {
			t.Fatalf("key %q appears unmasked in logs or errors:\n%s", key, out)
		}
	}
	for _, ev := range []string{`"msg":"llm.call"`, `"msg":"llm.call_failed"`, `"msg":"llm.retry"`, `"input_tokens":40`} {
		if !strings.Contains(out, ev) {
			t.Errorf("log lacks %s:\n%s", ev, out)
		}
	}
	if len(calls) != 2 || calls[1].Usage.InputTokens != 40 || calls[1].Attempts != 2 || llm.Code(calls[0].Err) != "unauthenticated" {
		t.Errorf("observer calls = %+v", calls)
	}
}
