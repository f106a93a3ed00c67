package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

func TestDecide_Order(t *testing.T) {
	tests := []struct {
		name       string
		in         Input
		cfg        func(*Config)
		answers    []fakeAnswer
		wantRoute  domain.Route
		wantSource domain.Source
		wantCalls  int
		// wantClassifierError is the reason logged as classifier.error ("" = none logged).
		wantClassifierError string
		wantRefusal         bool
		wantTask            string
	}{
		{name: "command beats a rule", in: Input{Text: "/plan nginxを再起動して"},
			wantRoute: domain.RoutePlan, wantSource: domain.SourceCommand, wantTask: "nginxを再起動して"},
		{name: "legacy order alias", in: Input{Text: "/order3 難しい最適化"},
			wantRoute: domain.RouteCode3, wantSource: domain.SourceCommand, wantTask: "難しい最適化"},
		{name: "full-width slash", in: Input{Text: "／analyze 売上"},
			wantRoute: domain.RouteAnalyze, wantSource: domain.SourceCommand, wantTask: "売上"},
		{name: "rule beats the classifier", in: Input{Text: "nginxを再起動して"}, answers: []fakeAnswer{text(`{"route":"CHAT","confidence":0.99,"reason":"x","evidence":[]}`)},
			wantRoute: domain.RouteOps, wantSource: domain.SourceRule},
		{name: "Japanese analysis by rule", in: Input{Text: "このログを集計して傾向を教えて"},
			wantRoute: domain.RouteAnalyze, wantSource: domain.SourceRule},
		{name: "classifier accepted", in: Input{Text: "週末の過ごし方を整理したい"},
			answers:   []fakeAnswer{text(`{"route":"PLAN","confidence":0.7,"reason":"organising","evidence":["整理"]}`)},
			wantRoute: domain.RoutePlan, wantSource: domain.SourceClassifier, wantCalls: 1},
		{name: "classifier CODE with evidence at 0.8", in: Input{Text: "ソートのやつ作って"},
			answers:   []fakeAnswer{text(`{"route":"CODE","confidence":0.8,"reason":"code","evidence":"ソート"}`)},
			wantRoute: domain.RouteCode, wantSource: domain.SourceClassifier, wantCalls: 1},
		{name: "classifier invalid JSON", in: Input{Text: "やあ"}, answers: []fakeAnswer{text(`route: CHAT`)},
			wantRoute: domain.RouteChat, wantSource: domain.SourceFallback, wantCalls: 1, wantClassifierError: "invalid_json"},
		{name: "classifier trailing text", in: Input{Text: "やあ"}, answers: []fakeAnswer{text(`{"route":"PLAN","confidence":0.9,"reason":"r","evidence":[]} ok`)},
			wantRoute: domain.RouteChat, wantSource: domain.SourceFallback, wantCalls: 1, wantClassifierError: "invalid_json"},
		{name: "classifier missing field", in: Input{Text: "やあ"}, answers: []fakeAnswer{text(`{"route":"PLAN","confidence":0.9,"reason":"r"}`)},
			wantRoute: domain.RouteChat, wantSource: domain.SourceFallback, wantCalls: 1, wantClassifierError: "missing_field"},
		{name: "classifier wrong type", in: Input{Text: "やあ"}, answers: []fakeAnswer{text(`{"route":"PLAN","confidence":"high","reason":"r","evidence":[]}`)},
			wantRoute: domain.RouteChat, wantSource: domain.SourceFallback, wantCalls: 1, wantClassifierError: "wrong_type"},
		{name: "classifier unknown route", in: Input{Text: "やあ"}, answers: []fakeAnswer{text(`{"route":"DANCE","confidence":0.9,"reason":"r","evidence":[]}`)},
			wantRoute: domain.RouteChat, wantSource: domain.SourceFallback, wantCalls: 1, wantClassifierError: "unknown_route"},
		{name: "classifier confidence 1.5", in: Input{Text: "やあ"}, answers: []fakeAnswer{text(`{"route":"PLAN","confidence":1.5,"reason":"r","evidence":[]}`)},
			wantRoute: domain.RouteChat, wantSource: domain.SourceFallback, wantCalls: 1, wantClassifierError: "confidence_out_of_range"},
		{name: "classifier below min_confidence", in: Input{Text: "やあ"}, answers: []fakeAnswer{text(`{"route":"PLAN","confidence":0.59,"reason":"r","evidence":[]}`)},
			wantRoute: domain.RouteChat, wantSource: domain.SourceFallback, wantCalls: 1, wantClassifierError: "low_confidence"},
		{name: "classifier CODE at 0.79", in: Input{Text: "やあ"}, answers: []fakeAnswer{text(`{"route":"CODE","confidence":0.79,"reason":"r","evidence":["x"]}`)},
			wantRoute: domain.RouteChat, wantSource: domain.SourceFallback, wantCalls: 1, wantClassifierError: "code_low_confidence"},
		{name: "classifier CODE2 without evidence", in: Input{Text: "やあ"}, answers: []fakeAnswer{text(`{"route":"CODE2","confidence":0.95,"reason":"r","evidence":[]}`)},
			wantRoute: domain.RouteChat, wantSource: domain.SourceFallback, wantCalls: 1, wantClassifierError: "code_without_evidence"},
		{name: "classifier call fails", in: Input{Text: "やあ"}, answers: []fakeAnswer{{err: fmt.Errorf("ollama: %w", llm.ErrUnavailable)}},
			wantRoute: domain.RouteChat, wantSource: domain.SourceFallback, wantCalls: 1, wantClassifierError: "call_failed"},
		{name: "classifier times out", in: Input{Text: "やあ"}, answers: []fakeAnswer{{err: fmt.Errorf("ollama: %w", llm.ErrTimeout)}},
			wantRoute: domain.RouteChat, wantSource: domain.SourceFallback, wantCalls: 1, wantClassifierError: "timeout"},
		{name: "classifier disabled", in: Input{Text: "やあ"}, cfg: func(c *Config) { c.ClassifierEnabled = false },
			wantRoute: domain.RouteChat, wantSource: domain.SourceFallback},
		{name: "forced route replaces rules and classifier", in: Input{Channel: "line", Text: "nginxを再起動して"},
			cfg:       func(c *Config) { c.ForcedRoutes["line"] = domain.RouteChat },
			wantRoute: domain.RouteChat, wantSource: domain.SourceChannelPolicy},
		{name: "forced route does not apply to another channel", in: Input{Channel: "slack", Text: "nginxを再起動して"},
			cfg:       func(c *Config) { c.ForcedRoutes["line"] = domain.RouteChat },
			wantRoute: domain.RouteOps, wantSource: domain.SourceRule},
		{name: "command beats the forced route", in: Input{Channel: "line", Text: "/ops nginx"},
			cfg:       func(c *Config) { c.ForcedRoutes["line"] = domain.RouteChat },
			wantRoute: domain.RouteOps, wantSource: domain.SourceCommand, wantTask: "nginx"},
		{name: "/code under local_only is refused", in: Input{Text: "/code fix it", LocalOnly: true},
			wantRoute: domain.RouteCode, wantSource: domain.SourceCommand, wantRefusal: true, wantTask: "fix it"},
		{name: "rule CODE under local_only is refused", in: Input{Text: "```go\nx\n```", LocalOnly: true},
			wantRoute: domain.RouteCode, wantSource: domain.SourceRule, wantRefusal: true},
		{name: "classifier CODE under local_only is refused", in: Input{Text: "あれ作って", LocalOnly: true},
			answers:   []fakeAnswer{text(`{"route":"CODE1","confidence":0.9,"reason":"r","evidence":["作って"]}`)},
			wantRoute: domain.RouteCode1, wantSource: domain.SourceClassifier, wantCalls: 1, wantRefusal: true},
		{name: "/deliberate under local_only is refused", in: Input{Text: "/deliberate 設計", LocalOnly: true},
			wantRoute: domain.RouteCode, wantSource: domain.SourceCommand, wantRefusal: true, wantTask: "設計"},
		{name: "local_only does not affect worker routes", in: Input{Text: "/analyze 売上", LocalOnly: true},
			wantRoute: domain.RouteAnalyze, wantSource: domain.SourceCommand, wantTask: "売上"},
		{name: "/codex is not a command", in: Input{Text: "/codex さん"}, answers: []fakeAnswer{text(`{"route":"CHAT","confidence":0.9,"reason":"r","evidence":[]}`)},
			wantRoute: domain.RouteChat, wantSource: domain.SourceClassifier, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := harnessFor(t, tt.cfg, tt.answers...)
			tt.in.JobID = "job_20260301_001"
			out := h.router.Decide(context.Background(), tt.in)
			if out.Decision.Route != tt.wantRoute || out.Decision.Source != tt.wantSource {
				t.Fatalf("got %s/%s (%s), want %s/%s", out.Decision.Route, out.Decision.Source, out.Decision.Reason, tt.wantRoute, tt.wantSource)
			}
			if got := h.model.calls(); got != tt.wantCalls {
				t.Errorf("classifier calls = %d, want %d", got, tt.wantCalls)
			}
			errs := h.logs.Events("classifier.error")
			if tt.wantClassifierError == "" && len(errs) > 0 {
				t.Errorf("unexpected classifier.error %v", errs)
			}
			if tt.wantClassifierError != "" {
				if len(errs) != 1 || errs[0]["reason"] != tt.wantClassifierError || errs[0]["job_id"] != "job_20260301_001" {
					t.Errorf("classifier.error = %v, want one with reason %s", errs, tt.wantClassifierError)
				}
				if !strings.Contains(out.Decision.Reason, tt.wantClassifierError) {
					t.Errorf("fallback reason %q does not name %s", out.Decision.Reason, tt.wantClassifierError)
				}
			}
			if (out.Refusal != "") != tt.wantRefusal {
				t.Errorf("refusal = %q, want refused=%v", out.Refusal, tt.wantRefusal)
			}
			if tt.wantRefusal && !strings.Contains(out.Refusal, "/cloud") {
				t.Errorf("refusal %q does not say how to lift it", out.Refusal)
			}
			if tt.wantTask != "" && out.TaskText != tt.wantTask {
				t.Errorf("task text %q, want %q", out.TaskText, tt.wantTask)
			}
			decisions := h.logs.Events("router.decision")
			if len(decisions) != 1 || decisions[0]["route"] != string(tt.wantRoute) || decisions[0]["source"] != string(tt.wantSource) ||
				decisions[0]["job_id"] != "job_20260301_001" {
				t.Errorf("router.decision log = %v", decisions)
			}
		})
	}
}

func TestDecide_ClassifierGetsOneFixedPrompt(t *testing.T) {
	h := newHarness(t, testConfig(), text(`{"route":"CHAT","confidence":0.9,"reason":"greeting","evidence":["やあ"]}`))
	h.router.Decide(context.Background(), Input{Text: "やあ"})
	req := h.model.requests[0]
	if !req.JSON || len(req.Messages) != 2 || req.Messages[0].Role != llm.RoleSystem || req.Messages[0].Content != classifierPrompt ||
		req.Messages[1].Content != "やあ" || req.Timeout != testConfig().ClassifierTimeout {
		t.Fatalf("classifier request %+v", req)
	}
}

// The classifier's timeout bounds its whole call, a wait for a turn at the model included, not
// only each attempt.
func TestDecide_ClassifierTimeoutBoundsTheWholeCall(t *testing.T) {
	h := newHarness(t, testConfig(), text(`{"route":"CHAT","confidence":0.9,"reason":"greeting","evidence":["やあ"]}`))
	before := time.Now()
	h.router.Decide(context.Background(), Input{Text: "やあ"})
	dl := h.model.deadlines[0]
	if dl.IsZero() || dl.Before(before) || dl.After(time.Now().Add(testConfig().ClassifierTimeout)) {
		t.Fatalf("classifier call's deadline %v, want within %s of the call", dl, testConfig().ClassifierTimeout)
	}
}

func TestDecide_EnglishRefusal(t *testing.T) {
	h := newHarness(t, testConfig())
	out := h.router.Decide(context.Background(), Input{Text: "/code2 x", LocalOnly: true, Locale: "en"})
	if !strings.Contains(out.Refusal, "Send /cloud") {
		t.Fatalf("refusal %q", out.Refusal)
	}
}

func TestNew_RefusesCloudWorker(t *testing.T) {
	_, err := New(testConfig(), defaultDictionary(t), &fakeModel{cloud: true}, &fakeCoder{}, discardLogger())
	if !errors.Is(err, ErrCloudWorker) {
		t.Fatalf("err = %v, want ErrCloudWorker", err)
	}
}

// harnessFor is newHarness over testConfig as configure (when set) changes it.
func harnessFor(t *testing.T, configure func(*Config), answers ...fakeAnswer) *harness {
	t.Helper()
	cfg := testConfig()
	if configure != nil {
		configure(&cfg)
	}
	return newHarness(t, cfg, answers...)
}
