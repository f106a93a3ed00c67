package domain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

func TestNormalizeOrder(t *testing.T) {
	cases := map[string]string{
		"order1": Order1, "coder1": Order1, "CODE1": Order1, " Aka ": Order1,
		"order2": Order2, "coder2": Order2, "ao": Order2, "": Order2, "CODE": Order2,
		"order3": Order3, "Coder3": Order3, "gin": Order3,
	}
	for in, want := range cases {
		got, err := NormalizeOrder(in, "order2")
		if err != nil || got != want {
			t.Errorf("NormalizeOrder(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"order4", "coder0", "chat"} {
		if _, err := NormalizeOrder(bad, "order2"); !errors.Is(err, ErrUnknownOrder) {
			t.Errorf("NormalizeOrder(%q) err = %v", bad, err)
		}
	}
}

// proposalJSON builds an answer from a valid base with edits applied (nil deletes a field).
func proposalJSON(t *testing.T, edits map[string]any) string {
	t.Helper()
	base := map[string]any{
		"job_id": "job_20261121_001",
		"plan":   "README に使い方を追記する",
		"patch":  `[{"type":"file_edit","action":"update","target":"README.md","content":"# Usage\n"}]`,
		"risk": map[string]any{"level": "low", "destructive": false, "compatibility_issues": []string{},
			"rollback_possible": true, "notes": ""},
		"cost_hint":     map[string]any{"estimated_tokens": 100, "estimated_cost_usd": 0.001, "near_limit": false},
		"need_approval": true,
		"uses_browser":  false,
		"task_type":     "docs",
	}
	for k, v := range edits {
		if v == nil {
			delete(base, k)
		} else {
			base[k] = v
		}
	}
	b, err := json.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseProposal(t *testing.T) {
	diff := "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -1,1 +1,1 @@\n-package x\n+package main\n"
	cases := []struct {
		name   string
		answer string
		want   []string // substrings of problems; empty = valid
		check  func(t *testing.T, p *Proposal)
	}{
		{"valid json commands", proposalJSON(t, nil), nil, func(t *testing.T, p *Proposal) {
			if p.Plan == "" || p.Risk.Level != "low" || p.TaskType != "docs" || !p.NeedApproval || !p.Risk.RollbackPossible {
				t.Errorf("decoded %+v", p)
			}
		}},
		{"valid markdown", proposalJSON(t, map[string]any{"patch": "```go:main.go\npackage main\n```\n"}), nil, nil},
		{"valid diff", proposalJSON(t, map[string]any{"patch": diff, "task_type": "codegen"}), nil, nil},
		{"empty patch allowed", proposalJSON(t, map[string]any{"patch": "", "task_type": "design"}), nil, nil},
		{"patch as inline array", proposalJSON(t, map[string]any{"patch": []map[string]any{{"type": "shell_command", "action": "run", "target": "go test ./..."}}}), nil, func(t *testing.T, p *Proposal) {
			if !strings.Contains(p.Patch, "go test") {
				t.Errorf("patch = %q", p.Patch)
			}
		}},
		{"fenced answer", "```json\n" + proposalJSON(t, nil) + "\n```", nil, nil},
		{"browser flag comes from the patch", proposalJSON(t, map[string]any{"patch": `[{"type":"browser","action":"chrome_navigate","target":"https://example.com"}]`, "uses_browser": false}), nil, func(t *testing.T, p *Proposal) {
			if !p.UsesBrowser {
				t.Error("uses_browser must follow the patch")
			}
		}},
		{"cost_hint optional", proposalJSON(t, map[string]any{"cost_hint": nil, "job_id": nil}), nil, nil},
		{"missing plan and risk", proposalJSON(t, map[string]any{"plan": nil, "risk": nil}), []string{"missing field plan", "missing field risk"}, nil},
		{"missing nested", proposalJSON(t, map[string]any{"risk": map[string]any{"level": "low"}}), []string{"missing field risk.destructive", "missing field risk.rollback_possible"}, nil},
		{"missing flags", proposalJSON(t, map[string]any{"need_approval": nil, "uses_browser": nil, "task_type": nil, "patch": nil}), []string{"missing field need_approval", "missing field uses_browser", "missing field task_type", "missing field patch"}, nil},
		{"wrong types", proposalJSON(t, map[string]any{"plan": 42, "need_approval": "yes", "risk": "low", "patch": 3, "cost_hint": "cheap"}), []string{"plan: must be a string, got a number", "need_approval: must be true or false, got a string", "risk: must be an object, got a string", "patch: must be a string", "cost_hint: must be an object"}, nil},
		{"bad enums", proposalJSON(t, map[string]any{"task_type": "poetry", "risk": map[string]any{"level": "extreme", "destructive": false, "rollback_possible": true}}), []string{`task_type: must be one of`, `risk.level: must be low, medium or high, got "extreme"`}, nil},
		{"empty plan", proposalJSON(t, map[string]any{"plan": "  "}), []string{"plan: must not be empty"}, nil},
		{"patch rejected by parser", proposalJSON(t, map[string]any{"patch": `[{"type":"file_edit","action":"explode","target":"a.txt"}]`}), []string{"patch: rejected by the patch parser", "command 1"}, nil},
		{"patch escapes workspace", proposalJSON(t, map[string]any{"patch": `[{"type":"file_edit","action":"create","target":"../etc/passwd","content":"x"}]`}), []string{"patch: rejected by the patch parser"}, nil},
		{"not json", "I think we should refactor", []string{"answer: no JSON object"}, nil},
		{"broken json", `{"plan": "x",`, []string{"answer: no JSON object"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, problems := ParseProposal(tc.answer, ParsePatch)
			if len(tc.want) == 0 {
				if len(problems) > 0 {
					t.Fatalf("unexpected problems: %v", problems)
				}
				if tc.check != nil {
					tc.check(t, p)
				}
				return
			}
			if p != nil {
				t.Fatal("invalid answer returned a proposal")
			}
			joined := strings.Join(problems, "\n")
			for _, w := range tc.want {
				if !strings.Contains(joined, w) {
					t.Errorf("problems %q lack %q", joined, w)
				}
			}
		})
	}
}

func TestCodesAndUserMessages(t *testing.T) {
	cases := []struct {
		err          error
		code, ja, en string
	}{
		{&DetailError{Err: fmt.Errorf("order2: %w", ErrCostOverLimit), Detail: "prompt ≈ 9 tokens"}, "cost_over_limit", "承認が必要", "approval is needed"},
		{&DetailError{Err: ErrInvalidProposal, Detail: "missing field plan"}, "invalid_proposal", "missing field plan", "missing field plan"},
		{fmt.Errorf("x: %w", llm.ErrUnauthenticated), "unauthenticated", "APIキー", "API key"},
		{fmt.Errorf("x: %w", llm.ErrLocalOnly), "local_only", "/cloud", "/cloud"},
		{fmt.Errorf("x: %w: %w", llm.ErrTimeout, context.DeadlineExceeded), "timeout", "時間内", "in time"},
		{ErrUnknownOrder, "unknown_order", "不明", "unknown"},
		{fmt.Errorf("order2: %w", &llm.LocalModelError{Model: "coder-v1:latest", Missing: true, Restarted: true, Err: llm.ErrModelUnavailable}),
			"model_unavailable", "ローカルモデル coder-v1:latest が Ollama にありません。サーバーで `picoclaw models setup`", "`picoclaw models setup`"},
		{&llm.LocalModelError{Model: "coder-v1:latest", Restarted: true, Err: llm.ErrUnreachable},
			"model_unavailable", "再起動しても戻りませんでした", "ollama serve"},
		{fmt.Errorf("x: %w", llm.ErrModelUnavailable), "model_unavailable", "picoclaw models status", "picoclaw models status"},
	}
	for _, tc := range cases {
		if got := Code(tc.err); got != tc.code {
			t.Errorf("Code(%v) = %q, want %q", tc.err, got, tc.code)
		}
		if got := UserMessage("ja", "order2", tc.err); !strings.Contains(got, tc.ja) || !strings.HasPrefix(got, "order2: ") {
			t.Errorf("ja message %q lacks %q", got, tc.ja)
		}
		if got := UserMessage("en", "order2", tc.err); !strings.Contains(got, tc.en) {
			t.Errorf("en message %q lacks %q", got, tc.en)
		}
	}
}

// TestProviderReasonReachesTheUser: a provider's permanent refusal (context length exceeded)
// reaches the user in its own words, secrets masked, instead of a bare "failed".
func TestProviderReasonReachesTheUser(t *testing.T) {
	// As the call policy reports a 400 whose error body said why.
	err := fmt.Errorf("order2: %w", &llm.CallError{Err: fmt.Errorf("openai gpt-4o: %w: HTTP 400", llm.ErrRejected), Attempts: 1,
		Reason: "This model's maximum context length is 128000 tokens. However, you requested 130512 tokens. key sk-proj-T3stK3yAbCdEfGhIjKlMnOpQrStUvWxYz0123456789"})
	for _, loc := range []string{"ja", "en"} {
		msg := UserMessage(loc, "order2", err)
		if !strings.Contains(msg, "maximum context length is 128000 tokens") || strings.Contains(msg, "T3stK3y") {
			t.Errorf("%s: %q", loc, msg)
		}
		if loc == "en" && !strings.HasPrefix(msg, "order2: the provider refused the request: ") {
			t.Errorf("en: %q", msg)
		}
	}
}

// TestEveryFailureText: every failure text is Japanese (but for the words typed as they are) and
// English, each code comes out of UserMessage in both, and a code added to FailureTexts needs a
// case here.
func TestEveryFailureText(t *testing.T) {
	if err := FailureTexts.Check(); err != nil {
		t.Fatal(err)
	}
	if err := FailureTexts.CheckLanguages("API", "/cloud", "picoclaw", "models", "status"); err != nil {
		t.Fatal(err)
	}
	cases := map[string]error{
		"unknown_order":     ErrUnknownOrder,
		"order_disabled":    ErrOrderDisabled,
		"order_unavailable": ErrOrderUnavailable,
		"invalid_task":      ErrInvalidTask,
		"cost_over_limit":   ErrCostOverLimit,
		"invalid_proposal":  ErrInvalidProposal,
		"timeout":           context.DeadlineExceeded,
		"unauthenticated":   llm.ErrUnauthenticated,
		"rate_limited":      llm.ErrRateLimited,
		"unavailable":       llm.ErrUnavailable,
		"local_only":        llm.ErrLocalOnly,
		"no_api_key":        llm.ErrNoAPIKey,
		"rejected":          llm.ErrRejected,
		"bad_response":      llm.ErrBadResponse,
		"model_unavailable": llm.ErrModelUnavailable,
		failedOther:         errors.New("something else"),
	}
	for code, err := range cases {
		for _, loc := range []string{"ja", "en"} {
			want := "order1: " + FailureTexts.Text(loc, code)
			if got := UserMessage(loc, "order1", fmt.Errorf("x: %w", err)); got != want {
				t.Errorf("%s %s: %q, want %q", code, loc, got, want)
			}
		}
	}
	FailureTexts.ReportUncovered(t.Errorf, func(code string) bool { _, ok := cases[code]; return ok })
}
