package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

// worker builds a worker answer; fields not given take calm defaults.
func worker(needsNext bool, mods ...func(map[string]any)) fakeAnswer {
	m := map[string]any{
		"result": "途中経過", "needs_next_loop": needsNext, "why": "理由", "next_actions": []string{"次へ"},
		"questions_for_user": []string{}, "confidence": 0.9, "risk": "low",
	}
	for _, f := range mods {
		f(m)
	}
	var b strings.Builder
	b.WriteString("{")
	first := true
	for k, v := range m {
		if !first {
			b.WriteString(",")
		}
		first = false
		fmt.Fprintf(&b, "%q:%s", k, jsonValue(v))
	}
	b.WriteString("}")
	return text(b.String())
}

func jsonValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = fmt.Sprintf("%q", s)
		}
		return "[" + strings.Join(parts, ",") + "]"
	default:
		return fmt.Sprint(x)
	}
}

func lowFit(route string) func(map[string]any) {
	return func(m map[string]any) { m["fit"] = 0.1; m["suggested_route"] = route; m["confidence"] = 0.9 }
}

func TestLoop(t *testing.T) {
	tests := []struct {
		name          string
		text          string
		cfg           func(*Config)
		step          time.Duration
		answers       []fakeAnswer
		coderErr      error
		wantStop      domain.StopReason
		wantCalls     int
		wantFinal     domain.Route
		wantReroute   bool
		wantOverrides int
		wantQuestions int
		wantProposals int
		wantError     string
	}{
		{name: "done on needs_next_loop=false", text: "/analyze 売上", answers: []fakeAnswer{worker(true), worker(false)},
			wantStop: domain.StopDone, wantCalls: 2, wantFinal: domain.RouteAnalyze},
		{name: "stops at max loops", text: "/plan 旅行", answers: []fakeAnswer{worker(true)},
			wantStop: domain.StopMaxLoops, wantCalls: 3, wantFinal: domain.RoutePlan},
		{name: "stops at max loops (5)", text: "/plan 旅行", cfg: func(c *Config) { c.Loop.MaxLoops = 5 }, answers: []fakeAnswer{worker(true)},
			wantStop: domain.StopMaxLoops, wantCalls: 5, wantFinal: domain.RoutePlan},
		{name: "stops at max millis", text: "/research 量子", step: 40 * time.Second, answers: []fakeAnswer{worker(true)},
			cfg:      func(c *Config) { c.Loop.MaxLoops = 10 },
			wantStop: domain.StopMaxMillis, wantCalls: 3, wantFinal: domain.RouteResearch},
		{name: "invalid JSON is a worker failure", text: "/ops 確認", answers: []fakeAnswer{worker(true), text("I will restart it now.")},
			wantStop: domain.StopWorkerFailure, wantCalls: 2, wantFinal: domain.RouteOps, wantError: "invalid_json"},
		{name: "missing field is a worker failure", text: "/ops 確認", answers: []fakeAnswer{text(`{"result":"x","needs_next_loop":false}`)},
			wantStop: domain.StopWorkerFailure, wantCalls: 1, wantFinal: domain.RouteOps, wantError: "missing_field"},
		{name: "too many questions is a worker failure", text: "/ops 確認",
			answers:  []fakeAnswer{worker(false, func(m map[string]any) { m["questions_for_user"] = []string{"a", "b", "c", "d"} })},
			wantStop: domain.StopWorkerFailure, wantCalls: 1, wantFinal: domain.RouteOps, wantError: "too_many"},
		{name: "model error is a worker failure", text: "/ops 確認", answers: []fakeAnswer{{err: fmt.Errorf("ollama: %w", llm.ErrUnavailable)}},
			wantStop: domain.StopWorkerFailure, wantCalls: 1, wantFinal: domain.RouteOps, wantError: "call_failed"},
		{name: "risk high with questions asks the user", text: "/ops 本番DBを移行",
			answers: []fakeAnswer{worker(true, func(m map[string]any) {
				m["risk"] = "high"
				m["questions_for_user"] = []string{"メンテナンス時間は?", "バックアップはありますか?"}
			})},
			wantStop: domain.StopNeedUserConfirmation, wantCalls: 1, wantFinal: domain.RouteOps, wantQuestions: 2},
		{name: "risk high alone asks the user", text: "/ops 全部消して", answers: []fakeAnswer{worker(true, func(m map[string]any) { m["risk"] = "high" })},
			wantStop: domain.StopNeedUserConfirmation, wantCalls: 1, wantFinal: domain.RouteOps},
		{name: "low confidence on a major branch asks the user", text: "/plan 転職", answers: []fakeAnswer{worker(true, func(m map[string]any) { m["confidence"] = 0.2 })},
			wantStop: domain.StopNeedUserConfirmation, wantCalls: 1, wantFinal: domain.RoutePlan},
		{name: "reroutes once to another worker route", text: "/plan このログ", answers: []fakeAnswer{worker(true, lowFit("ANALYZE")), worker(false)},
			wantStop: domain.StopDone, wantCalls: 2, wantFinal: domain.RouteAnalyze, wantReroute: true, wantOverrides: 1},
		{name: "never reroutes twice", text: "/plan x",
			answers:  []fakeAnswer{worker(true, lowFit("ANALYZE")), worker(true, lowFit("RESEARCH")), worker(true, lowFit("OPS"))},
			wantStop: domain.StopMaxLoops, wantCalls: 3, wantFinal: domain.RouteAnalyze, wantReroute: true, wantOverrides: 1},
		{name: "no reroute at fit 0.3", text: "/plan x",
			answers:  []fakeAnswer{worker(false, func(m map[string]any) { m["fit"] = 0.3; m["suggested_route"] = "ANALYZE" })},
			wantStop: domain.StopDone, wantCalls: 1, wantFinal: domain.RoutePlan},
		{name: "no reroute below confidence 0.8", text: "/plan x",
			answers:  []fakeAnswer{worker(false, func(m map[string]any) { m["fit"] = 0.1; m["suggested_route"] = "ANALYZE"; m["confidence"] = 0.79 })},
			wantStop: domain.StopDone, wantCalls: 1, wantFinal: domain.RoutePlan},
		{name: "no reroute to the same route", text: "/plan x", answers: []fakeAnswer{worker(false, lowFit("PLAN"))},
			wantStop: domain.StopDone, wantCalls: 1, wantFinal: domain.RoutePlan},
		{name: "invalid suggested route is a worker failure", text: "/plan x", answers: []fakeAnswer{worker(false, lowFit("DANCE"))},
			wantStop: domain.StopWorkerFailure, wantCalls: 1, wantFinal: domain.RoutePlan, wantError: "unknown_route"},
		{name: "reroute to CHAT hands back to chat", text: "/research こんにちは", answers: []fakeAnswer{worker(true, lowFit("CHAT"))},
			wantStop: domain.StopDone, wantCalls: 1, wantFinal: domain.RouteChat, wantReroute: true, wantOverrides: 1},
		{name: "reroute to CODE2 asks coder-order", text: "/analyze この関数", answers: []fakeAnswer{worker(true, lowFit("CODE2"))},
			wantStop: domain.StopDone, wantCalls: 1, wantFinal: domain.RouteCode2, wantReroute: true, wantOverrides: 1, wantProposals: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := harnessFor(t, tt.cfg, tt.answers...)
			h.model.step = tt.step
			res, err := h.router.ProcessTask(context.Background(), Input{JobID: "job_20260301_007", Text: tt.text})
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != tt.wantStop || res.WorkerCalls != tt.wantCalls || h.model.calls() != tt.wantCalls {
				t.Fatalf("stop %s after %d calls (model saw %d), want %s after %d (error %q)",
					res.StopReason, res.WorkerCalls, h.model.calls(), tt.wantStop, tt.wantCalls, res.ErrorReason)
			}
			if res.FinalRoute != tt.wantFinal || res.RerouteUsed != tt.wantReroute {
				t.Errorf("final %s reroute %v, want %s %v", res.FinalRoute, res.RerouteUsed, tt.wantFinal, tt.wantReroute)
			}
			if got := len(h.logs.Events("route.override")); got != tt.wantOverrides {
				t.Errorf("route.override logged %d times, want %d", got, tt.wantOverrides)
			}
			if len(res.Questions) != tt.wantQuestions {
				t.Errorf("questions %v, want %d", res.Questions, tt.wantQuestions)
			}
			if len(res.Proposals) != tt.wantProposals || h.coder.calls() != tt.wantProposals {
				t.Errorf("proposals %d (coder calls %d), want %d", len(res.Proposals), h.coder.calls(), tt.wantProposals)
			}
			if !strings.Contains(res.ErrorReason, tt.wantError) || (tt.wantError == "") != (res.ErrorReason == "") {
				t.Errorf("error reason %q, want it to contain %q", res.ErrorReason, tt.wantError)
			}
			stops := h.logs.Events("loop.stop")
			if len(stops) != 1 || stops[0]["stop_reason"] != string(tt.wantStop) || stops[0]["job_id"] != "job_20260301_007" {
				t.Errorf("loop.stop = %v", stops)
			}
			finals := h.logs.Events("final.route")
			if len(finals) != 1 || finals[0]["final_route"] != string(tt.wantFinal) || finals[0]["reroute_used"] != tt.wantReroute ||
				finals[0]["worker_calls"] != float64(tt.wantCalls) {
				t.Errorf("final.route = %v", finals)
			}
			if tt.wantStop == domain.StopWorkerFailure && len(h.logs.Events("worker.fail")) != 1 {
				t.Errorf("worker.fail not logged once")
			}
		})
	}
}

func TestLoop_RerouteToCodeIgnoredUnderLocalOnly(t *testing.T) {
	h := newHarness(t, testConfig(), worker(false, lowFit("CODE")))
	res, err := h.router.ProcessTask(context.Background(), Input{Text: "/plan x", LocalOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.RerouteUsed || res.FinalRoute != domain.RoutePlan || h.coder.calls() != 0 {
		t.Fatalf("reroute %v final %s coder calls %d", res.RerouteUsed, res.FinalRoute, h.coder.calls())
	}
}

// The second loop sees the first answer and a continuation request; the worker's contract and
// locale are in the system prompt.
func TestLoop_Transcript(t *testing.T) {
	h := newHarness(t, testConfig(), worker(true), worker(false))
	_, err := h.router.ProcessTask(context.Background(), Input{Text: "/analyze 売上", Locale: "en",
		History: []Turn{{Role: "user", Text: "前の質問"}, {Role: "assistant", Text: "前の答え"}}})
	if err != nil {
		t.Fatal(err)
	}
	first, second := h.model.requests[0], h.model.requests[1]
	if !first.JSON || first.Messages[0].Role != llm.RoleSystem || !strings.Contains(first.Messages[0].Content, "needs_next_loop") ||
		!strings.Contains(first.Messages[0].Content, "in English") {
		t.Fatalf("system prompt %q", first.Messages[0].Content)
	}
	if len(first.Messages) != 4 || first.Messages[1].Content != "前の質問" || first.Messages[2].Role != llm.RoleAssistant || first.Messages[3].Content != "売上" {
		t.Fatalf("first request %+v", first.Messages)
	}
	if len(second.Messages) != 6 || second.Messages[4].Role != llm.RoleAssistant || !strings.Contains(second.Messages[5].Content, "step 2") {
		t.Fatalf("second request %+v", second.Messages)
	}
}

// A cancelled request ends the loop with the context's error, not a result.
func TestLoop_ContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := newHarness(t, testConfig(), fakeAnswer{err: context.Canceled})
	cancel()
	if _, err := h.router.ProcessTask(ctx, Input{Text: "/plan x"}); err == nil {
		t.Fatal("want an error for a cancelled context")
	}
}
