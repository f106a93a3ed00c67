package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

func TestProcessTask_Routes(t *testing.T) {
	tests := []struct {
		name, text, wantOrder string
		local, refused        bool
		wantFinal             domain.Route
		wantCoder             int
	}{
		{name: "CODE goes to the configured default order", text: "/code ソート関数", wantOrder: "order2", wantFinal: domain.RouteCode, wantCoder: 1},
		{name: "CODE1 goes to order1", text: "/code1 設計", wantOrder: "order1", wantFinal: domain.RouteCode1, wantCoder: 1},
		{name: "legacy coder3 goes to order3", text: "/coder3 難問", wantOrder: "order3", wantFinal: domain.RouteCode3, wantCoder: 1},
		{name: "rule CODE goes to the default order", text: "main.goのバグを直して", wantOrder: "order2", wantFinal: domain.RouteCode, wantCoder: 1},
		{name: "CHAT returns to chat-mio without any call", text: "/chat やあ", wantFinal: domain.RouteChat},
		{name: "/code under local_only never reaches coder-order", text: "/code x", local: true, wantFinal: domain.RouteCode, refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			res, err := h.router.ProcessTask(context.Background(), Input{JobID: "job_20260301_002", Text: tt.text, LocalOnly: tt.local,
				History: []Turn{{Role: "user", Text: "前提"}}})
			if err != nil {
				t.Fatal(err)
			}
			if h.coder.calls() != tt.wantCoder || h.model.calls() != 0 {
				t.Fatalf("coder calls %d model calls %d, want %d and 0", h.coder.calls(), h.model.calls(), tt.wantCoder)
			}
			if res.FinalRoute != tt.wantFinal || (res.Refusal != "") != tt.refused {
				t.Fatalf("final %s refusal %q", res.FinalRoute, res.Refusal)
			}
			if tt.wantCoder == 1 {
				in := h.coder.propose[0]
				if in.Order != tt.wantOrder || in.JobID != "job_20260301_002" || in.Locale != "ja" || len(in.Context) != 1 || in.Task == "" {
					t.Fatalf("propose input %+v", in)
				}
				if len(res.Proposals) != 1 || res.Proposals[0].Proposal == nil || res.Proposals[0].Order != tt.wantOrder {
					t.Fatalf("proposals %+v", res.Proposals)
				}
			}
		})
	}
}

func TestProcessTask_CoderErrorIsAResult(t *testing.T) {
	h := newHarness(t, testConfig())
	h.coder.err = &CoderError{Code: "cost_over_limit", Message: "estimate $2.10 exceeds $1.00"}
	res, err := h.router.ProcessTask(context.Background(), Input{Text: "/code3 大きな変更"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Proposals) != 1 || res.Proposals[0].ErrorCode != "cost_over_limit" || res.Proposals[0].Order != "order3" ||
		!strings.Contains(res.ErrorReason, "cost_over_limit") {
		t.Fatalf("result %+v", res)
	}
	h.coder.err = errors.New("connection refused")
	res, _ = h.router.ProcessTask(context.Background(), Input{Text: "/code x"})
	if res.Proposals[0].ErrorCode != "unavailable" {
		t.Fatalf("error code %q", res.Proposals[0].ErrorCode)
	}
}

func TestProcessTask_Deliberate(t *testing.T) {
	h := newHarness(t, testConfig())
	h.coder.results = []domain.ProposalResult{
		{Order: "order1", Proposal: &domain.Proposal{Plan: "A案\n詳細", Patch: "```go:pkg/a.go\nx\n```\n```go:README.md\ny\n```",
			Risk: domain.ProposalRisk{Level: domain.RiskMedium}, Cost: domain.CostHint{EstimatedCostUSD: 0.01, EstimatedTokens: 900}}},
		{Order: "order2", Proposal: &domain.Proposal{Plan: "B案", Patch: "diff --git a/pkg/a.go b/pkg/a.go\n--- a/pkg/a.go\n+++ b/pkg/a.go\n@@ -1 +1 @@\n-x\n+y\n",
			Risk: domain.ProposalRisk{Level: domain.RiskLow, RollbackPossible: true}, Cost: domain.CostHint{EstimatedCostUSD: 0.05}}},
		{Order: "order3", ErrorCode: "timeout", ErrorMessage: "no answer within 120s"},
	}
	res, err := h.router.ProcessTask(context.Background(), Input{JobID: "job_20260301_003", Text: "/deliberate 認証を作り直す"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Deliberation || len(h.coder.many) != 1 || h.coder.many[0].Task != "認証を作り直す" || len(h.coder.many[0].Orders) != 0 {
		t.Fatalf("deliberation %v calls %+v", res.Deliberation, h.coder.many)
	}
	c := res.Comparison
	if c == nil || len(c.Entries) != 3 || len(res.Proposals) != 3 {
		t.Fatalf("comparison %+v", c)
	}
	if strings.Join(c.OverlappingPaths, ",") != "pkg/a.go" || c.Recommended != 2 {
		t.Fatalf("overlaps %v recommended %d", c.OverlappingPaths, c.Recommended)
	}
	if c.Entries[2].ErrorCode != "timeout" || !strings.Contains(c.Summary, "3 件中 2 件") {
		t.Fatalf("entries %+v summary %q", c.Entries, c.Summary)
	}
	for _, ev := range []string{"deliberation.started", "deliberation.comparison"} {
		if got := h.logs.Events(ev); len(got) != 1 || got[0]["job_id"] != "job_20260301_003" {
			t.Errorf("%s logged %v", ev, got)
		}
	}
	if got := h.logs.Events("deliberation.proposal_received"); len(got) != 3 {
		t.Errorf("proposal_received logged %d times", len(got))
	}
}

func TestProcessTask_CommandWithoutTaskAsks(t *testing.T) {
	for _, tt := range []struct{ text, locale, want string }{
		{"/code", "ja", "/code の後に依頼内容"},
		{"/analyze  ", "en", "after /analyze"},
		{"/deliberate", "ja", "/deliberate の後に"},
	} {
		h := newHarness(t, testConfig())
		res, err := h.router.ProcessTask(context.Background(), Input{Text: tt.text, Locale: tt.locale})
		if err != nil {
			t.Fatal(err)
		}
		if res.StopReason != domain.StopNeedUserConfirmation || len(res.Questions) != 1 || !strings.Contains(res.Questions[0], tt.want) ||
			h.coder.calls() != 0 || h.model.calls() != 0 {
			t.Errorf("%q: %+v (coder %d, model %d)", tt.text, res, h.coder.calls(), h.model.calls())
		}
	}
	h := newHarness(t, testConfig())
	if res, _ := h.router.ProcessTask(context.Background(), Input{Text: "/chat"}); res.StopReason != "" || res.FinalRoute != domain.RouteChat {
		t.Errorf("/chat alone: %+v", res)
	}
}

func TestProcessTask_AutoDeliberationOnHighRisk(t *testing.T) {
	tests := []struct {
		name     string
		enabled  bool
		risk     domain.Risk
		local    bool
		wantMany bool
	}{
		{"high risk with auto on", true, domain.RiskHigh, false, true},
		{"high risk with auto off", false, domain.RiskHigh, false, false},
		{"medium risk with auto on", true, domain.RiskMedium, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.AutoDeliberateOnHighRisk = tt.enabled
			h := newHarness(t, cfg)
			h.coder.proposal.Risk.Level = tt.risk
			h.coder.results = []domain.ProposalResult{
				{Order: "order1", Proposal: &domain.Proposal{Plan: "safer", Patch: "```go:main.go\nx\n```", Risk: domain.ProposalRisk{Level: domain.RiskLow}}},
				{Order: "order3", ErrorCode: "timeout"},
			}
			res, err := h.router.ProcessTask(context.Background(), Input{JobID: "job_20260301_060", Text: "/code2 全部書き換えて"})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(h.coder.many) == 1; got != tt.wantMany {
				t.Fatalf("ProposeMany called: %v, want %v", got, tt.wantMany)
			}
			if !tt.wantMany {
				if res.Deliberation || res.Comparison != nil || len(res.Proposals) != 1 {
					t.Fatalf("unexpected deliberation %+v", res)
				}
				return
			}
			if o := h.coder.many[0].Orders; strings.Join(o, ",") != "order1,order3" {
				t.Fatalf("asked orders %v", o)
			}
			c := res.Comparison
			if !res.Deliberation || len(res.Proposals) != 3 || c == nil || len(c.Entries) != 3 || c.Entries[0].Order != "order2" ||
				c.Recommended != 2 || strings.Join(c.OverlappingPaths, ",") != "main.go" {
				t.Fatalf("comparison %+v", c)
			}
			if s := h.logs.Events("deliberation.started"); len(s) != 1 || s[0]["trigger"] != "auto_high_risk" {
				t.Fatalf("deliberation.started %v", s)
			}
		})
	}
}

func TestDecide_ClassifierReadsTheHeadOfLongInput(t *testing.T) {
	h := newHarness(t, testConfig(), text(`{"route":"CHAT","confidence":0.9,"reason":"r","evidence":[]}`))
	long := strings.Repeat("あ", classifierInputRunes+500)
	h.router.Decide(context.Background(), Input{Text: long})
	if got := len([]rune(h.model.requests[0].Messages[1].Content)); got != classifierInputRunes {
		t.Fatalf("classifier read %d runes", got)
	}
}
