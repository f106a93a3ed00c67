// Package app holds coder-order's use cases: Propose and ProposeMany.
package app

import (
	"fmt"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/coder-order/internal/domain"
)

// Task is what a coder is asked to propose for.
type Task struct {
	JobID string
	Text  string
	// Context is extra material (earlier turns, worker notes), oldest first.
	Context   []string
	LocalOnly bool
	// Locale is ja (default) or en: the language of the plan.
	Locale string
	// ConfirmedCostUSD and ConfirmedTokens: a person approved continuing at about this cost (a
	// cost confirmation); a call estimated within ConfirmedMargin of it goes ahead above the
	// limits.
	ConfirmedCostUSD float64
	ConfirmedTokens  int64
}

// ConfirmedMargin is how far an estimate may exceed the confirmed one (the workspace read for
// the context may have changed a little since the person was asked).
const ConfirmedMargin = 1.10

// confirmedCovers reports whether the person's confirmation covers est.
func (t Task) confirmedCovers(est domain.CostEstimate) bool {
	if t.ConfirmedCostUSD <= 0 && t.ConfirmedTokens <= 0 {
		return false
	}
	return est.CostUSD <= t.ConfirmedCostUSD*ConfirmedMargin && float64(est.Tokens) <= float64(t.ConfirmedTokens)*ConfirmedMargin
}

// buildMessages writes the role prompt and the task for one order.
// workspace is the rendered context pack ("" when there is none); toolCalls is how many
// read-only tool calls the order may make (0: it has no tools).
func buildMessages(order string, t Task, workspace string, toolCalls int) []llm.Message {
	role := domain.Roles[order]
	lang := "Japanese"
	if t.Locale == "en" {
		lang = "English"
	}
	var sys strings.Builder
	sys.WriteString(role.Brief)
	sys.WriteString("\n\nYou only propose; you never execute anything. A human approves every change before it runs.\n")
	sys.WriteString("Answer with exactly one JSON object, no prose around it, with these fields (cost_hint may be left at zero; it is filled in for you):\n")
	sys.WriteString(domain.ContractJSON)
	fmt.Fprintf(&sys, "\n\nWrite plan, risk.notes and compatibility_issues in %s. Paths in the patch are relative to the workspace root. ", lang)
	sys.WriteString("Mark destructive=true for deletes, renames, overwrites of many files, history rewrites or pushes.")
	if order == domain.Order3 {
		sys.WriteString(" need_approval is always true for you.")
	}
	if toolCalls > 0 {
		fmt.Fprintf(&sys, "\n\nBefore you answer you may look at the workspace with the read-only tools (list_tree, read_file, search, "+
			"git_status, git_log, diff_summary), at most %d calls. Read every file you change: read_file shows its sha256, which goes "+
			"in \"base\". Files holding secrets are never shown. When you have seen enough, answer with the JSON object alone, "+
			"without a tool call.", toolCalls)
	}
	var user strings.Builder
	fmt.Fprintf(&user, "job_id: %s\n\nTask:\n%s\n", t.JobID, strings.TrimSpace(t.Text))
	if len(t.Context) > 0 {
		user.WriteString("\nContext:\n")
		for _, c := range t.Context {
			user.WriteString("- ")
			user.WriteString(strings.TrimSpace(c))
			user.WriteByte('\n')
		}
	}
	if workspace != "" {
		user.WriteString("\n")
		user.WriteString(workspace)
	}
	return []llm.Message{{Role: llm.RoleSystem, Content: sys.String()}, {Role: llm.RoleUser, Content: user.String()}}
}

// repairMessage asks for a corrected answer, listing every problem.
func repairMessage(problems []string) llm.Message {
	var b strings.Builder
	b.WriteString("Your answer does not satisfy the contract. Problems:\n")
	for _, p := range problems {
		b.WriteString("- ")
		b.WriteString(p)
		b.WriteByte('\n')
	}
	b.WriteString("Answer again with the complete corrected JSON object only.")
	return llm.Message{Role: llm.RoleUser, Content: b.String()}
}
