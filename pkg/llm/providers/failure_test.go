package providers

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/internal/llmtest"
)

// endedTracker records the errors Tracked reports.
type endedTracker struct {
	mu    sync.Mutex
	ended []error
}

func (r *endedTracker) Track(context.Context) func(error) {
	return func(err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.ended = append(r.ended, err)
	}
}

// TestTrackedFailures: every kind of provider failure reaches the tracker (the /status report)
// as a stable code and a short detail — the provider, the model, the HTTP status and the start
// of the provider's words, secrets masked — while the caller still gets the whole error.
func TestTrackedFailures(t *testing.T) {
	closed := httptest.NewServer(nil)
	closed.Close()
	oaErr := func(msg string) string {
		return `{"error":{"message":"` + msg + `","type":"invalid_request_error","param":null,"code":"x"}}`
	}
	long := strings.Repeat("the provider keeps talking ", 20)
	cases := []struct {
		name, provider string
		url            string // "" for the fake
		steps          []llmtest.Step
		ctx            func() (context.Context, context.CancelFunc)
		localOnly      bool
		code, detail   string
	}{
		{name: "unreachable", provider: llm.ProviderOpenAI, url: closed.URL, code: llm.FailureUnreachable, detail: "openai gpt-4o"},
		{name: "server error", provider: llm.ProviderAnthropic, steps: []llmtest.Step{{Status: 500, Body: `{"type":"error","error":{"type":"api_error","message":"internal"}}`}},
			code: llm.FailureServerError, detail: "anthropic claude-sonnet-4-5 HTTP 500: api_error: internal"},
		{name: "authentication", provider: llm.ProviderOpenAI, steps: []llmtest.Step{{Status: 401, Body: oaErr("Incorrect API key provided: " + llmtest.TestOpenAIKey)}},
			code: llm.FailureUnauthenticated, detail: "openai gpt-4o HTTP 401: Incorrect API key provided: sk-***"},
		{name: "rate limited", provider: llm.ProviderAnthropic, steps: []llmtest.Step{{Status: 529, Body: llmtest.AnthropicOverloaded}},
			code: llm.FailureRateLimited, detail: "anthropic claude-sonnet-4-5 HTTP 529: overloaded_error: Overloaded"},
		{name: "model missing", provider: llm.ProviderOllama, steps: []llmtest.Step{{Status: 404, Body: `{"error":"model \"worker-v1:latest\" not found, try pulling it first"}`}},
			code: llm.FailureModelUnavailable, detail: `ollama worker-v1:latest HTTP 404: model "worker-v1:latest" not found, try pulli…`},
		{name: "timeout", provider: llm.ProviderDeepSeek, steps: []llmtest.Step{{Status: 200, Body: llmtest.OpenAIOK, Delay: 10 * time.Second}},
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 50*time.Millisecond)
			}, code: llm.FailureTimeout, detail: "deepseek deepseek-chat"},
		{name: "malformed answer", provider: llm.ProviderOpenAI, steps: []llmtest.Step{{Status: 200, Body: `{"choices":[`}},
			code: llm.FailureBadResponse, detail: "openai gpt-4o"},
		{name: "rejected, long words clipped", provider: llm.ProviderOpenAI, steps: []llmtest.Step{{Status: 400, Body: oaErr(long)}},
			code: llm.FailureRejected, detail: "openai gpt-4o HTTP 400: " + long[:llm.FailureDetailMax-len("openai gpt-4o HTTP 400: ")-1] + "…"},
		{name: "local only", provider: llm.ProviderAnthropic, localOnly: true, code: llm.FailureLocalOnly, detail: "anthropic claude-sonnet-4-5"},
		{name: "cancelled", provider: llm.ProviderOpenAI, steps: []llmtest.Step{{Status: 200, Body: llmtest.OpenAIOK}},
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			}, code: llm.FailureCanceled, detail: "openai gpt-4o"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url
			if url == "" {
				steps := tc.steps
				if steps == nil {
					steps = []llmtest.Step{{Status: 200, Body: llmtest.OpenAIOK}}
				}
				url = llmtest.NewFake(t, steps...).Srv.URL
			}
			s := &llmtest.Sleeps{}
			var c llm.Client
			switch {
			case tc.provider == llm.ProviderOllama:
				var err error
				c, err = New(llm.Config{Provider: llm.ProviderOllama, Model: "worker-v1:latest", BaseURL: url, RetryMax: 2, MaxTokens: 512}, llm.WithSleep(s.Sleep))
				if err != nil {
					t.Fatal(err)
				}
			default:
				c = cloudClient(t, tc.provider, url, s)
			}
			rec := &endedTracker{}
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tc.ctx != nil {
				ctx, cancel = tc.ctx()
			}
			defer cancel()
			_, err := llm.Tracked(c, rec).Chat(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, LocalOnly: tc.localOnly})
			if err == nil || len(rec.ended) != 1 {
				t.Fatalf("err %v, ended %v", err, rec.ended)
			}
			f, ok := errors.AsType[*llm.Failure](rec.ended[0])
			if !ok || !errors.Is(rec.ended[0], errors.Unwrap(f)) || f.Error() != err.Error() {
				t.Fatalf("tracker got %T %v", rec.ended[0], rec.ended[0])
			}
			if f.ReportCode() != tc.code || f.ReportDetail() != tc.detail {
				t.Errorf("report %q %q, want %q %q (error: %v)", f.ReportCode(), f.ReportDetail(), tc.code, tc.detail, err)
			}
			if utf8.RuneCountInString(f.ReportDetail()) > llm.FailureDetailMax || strings.Contains(f.ReportDetail(), "T3stK3y") {
				t.Errorf("detail not bounded or not masked: %q", f.ReportDetail())
			}
		})
	}
}
