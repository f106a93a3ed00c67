package domain

import (
	"fmt"
	"slices"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

// Because is a reason of the policy as approval says it to a person: a code of Texts and its
// arguments, which are data (operation numbers, paths, patterns, names, amounts). The audit log
// keeps it beside the English text, so a reason is said in the reader's language whenever it is
// shown.
type Because struct {
	Code string   `json:"code,omitempty"`
	Args []string `json:"args,omitempty"`
}

// because is the reason code with args.
func because(code string, args ...any) Because {
	b := Because{Code: code, Args: make([]string, len(args))}
	for i, a := range args {
		b.Args[i] = fmt.Sprint(a)
	}
	return b
}

// English is the reason in English: the text the decision and the audit log carry.
func (b Because) English() string {
	return Texts.Text("en", b.Code, withShell("en", b.Code, b.Args)...)
}

// ReasonText is a policy reason said in locale: the reason of code with args, when approval
// knows the code; otherwise text as it was written — the reason of an operator's rule (their own
// words), or of a decision recorded before reasons had codes.
func ReasonText(locale, code string, args []string, text string) string {
	if code == "" || !Texts.Has(code) {
		return text
	}
	return Texts.Text(locale, code, withShell(locale, code, args)...)
}

// shellArgAt is the index of the argument of code that is what the shell analyzer said, in
// English; when the arguments go on past it, they are the analyzer's code of patch.ShellTexts
// and its arguments (a hit or reason recorded before those had codes stops at the English).
func shellArgAt(code string) (int, bool) {
	if code == CodeScopeShellCommand {
		return 1, true
	}
	for _, c := range requireCodes {
		if c == code {
			return 0, true
		}
	}
	return 0, false
}

// withShell is args with the shell analyzer's words said in locale, and its code and arguments
// taken off; in English they are said as recorded.
func withShell(locale, code string, args []string) []string {
	i, ok := shellArgAt(code)
	if !ok || len(args) <= i+1 {
		return args
	}
	out := slices.Clone(args[:i+1])
	if !fault.English(locale) && patch.ShellTexts.Has(args[i+1]) {
		out[i] = patch.ShellText(locale, args[i+1], args[i+2:])
	}
	return out
}

// ReasonIn is the decision's reason said in locale.
func (d Decision) ReasonIn(locale string) string {
	return ReasonText(locale, d.ReasonCode, d.ReasonArgs, d.Reason)
}

// PolicyReasonIn is the reason of the job's current state said in locale.
func (j Job) PolicyReasonIn(locale string) string {
	return ReasonText(locale, j.PolicyReasonCode, j.PolicyReasonArgs, j.PolicyReason)
}

// TextIn is what the approval request says about a hit in locale: the built-in requirement in
// the reader's language, or an operator's rule by its name with its detail as written.
func (h Hit) TextIn(locale string) string {
	if h.Code != "" && Texts.Has(h.Code) {
		args := slices.Clone(withShell(locale, h.Code, h.Args))
		for i, a := range args {
			args[i] = SafeLine(a, 100)
		}
		return Texts.Text(locale, h.Code, args...)
	}
	return ruleLabel(h.Rule) + ": " + SafeLine(h.Detail, 100)
}

// Decided is a decision whose reason is why.
func Decided(outcome Outcome, rule string, why Because) Decision {
	return Decision{Outcome: outcome, Rule: rule, Reason: why.English(), ReasonCode: why.Code, ReasonArgs: why.Args}
}

// NewHit is a requirement's hit whose text is the code of Texts with args; detail is its
// English detail (the rule engine's facts and simulations show it).
func NewHit(rule string, op int, detail string, code string, args ...any) Hit {
	why := because(code, args...)
	return Hit{Rule: rule, Op: op, Detail: detail, Code: why.Code, Args: why.Args}
}

// RefusedText is the requester's message about a proposal the policy refused, in j's locale:
// the deciding rule and its reason (a built-in rule's in the reader's language, an operator's
// as written, either on one line).
func RefusedText(j Job) string {
	return Texts.Text(j.Locale, CodeRefusedByPolicy, j.ID, j.PolicyRule, SafeLine(j.PolicyReasonIn(j.Locale), 300))
}
