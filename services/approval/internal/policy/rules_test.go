package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// userRules is the default policy plus a denial, a requirement and a narrow allowance.
func userRules(t testing.TB) *Policy {
	t.Helper()
	return mustPolicy(t, string(DefaultSource())+`
  - name: never-prod
    scope: operation
    when: op.paths.exists(p, p.startsWith("deploy/prod/"))
    decision: deny
    reason: "production is deployed by hand ({detail})"
    detail: op.target

  - name: billing-needs-a-person
    when: paths.exists(p, p.startsWith("billing/"))
    decision: require
    reason: billing code is reviewed by a person

  - name: small-docs
    when: >-
      task_type == "docs" && size(ops) > 0 &&
      ops.all(o, o.type == "file_edit" && o.paths.all(p, p.startsWith("docs/") && p.endsWith(".md"))) &&
      stats.additions + stats.deletions < 50
    decision: allow
    reason: docs changes under 50 lines are fine
`)
}

func TestUserRules(t *testing.T) {
	cfg := domain.PolicyConfig{HardDenyPaths: []string{".git"}, CostLimitUSD: 1, TokenLimit: 1000}
	pol := userRules(t)
	tests := []struct {
		name, patch, task string
		outcome           domain.Outcome
		rule, reason      string
	}{
		{"deny added", `[{"type":"file_edit","action":"update","target":"deploy/prod/app.yaml","content":"x"}]`, "", domain.OutcomeRefused, "never-prod", "production is deployed by hand (deploy/prod/app.yaml)"},
		{"deny beats a hard requirement", `[{"type":"file_edit","action":"delete","target":"deploy/prod/app.yaml"}]`, "", domain.OutcomeRefused, "never-prod", ""},
		{"requirement added", `[{"type":"file_edit","action":"update","target":"billing/x.go","content":"x"}]`, "", domain.OutcomePending, "billing-needs-a-person", "needs a person: billing-needs-a-person (billing code is reviewed by a person)"},
		{"narrow allowance", `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"x"}]`, "docs", domain.OutcomeAutoApproved, "small-docs", "docs changes under 50 lines are fine"},
		{"allowance is narrow: task type", `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"x"}]`, "codegen", domain.OutcomePending, domain.RuleAskNoGrant, ""},
		{"allowance is narrow: path", `[{"type":"file_edit","action":"update","target":"src/a.md","content":"x"}]`, "docs", domain.OutcomePending, domain.RuleAskNoGrant, ""},
		{"allowance is narrow: size", `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"` + strings.Repeat(`x\n`, 60) + `"}]`, "docs", domain.OutcomePending, domain.RuleAskNoGrant, ""},
		{"allowance never covers a deletion", `[{"type":"file_edit","action":"delete","target":"docs/a.md"}]`, "docs", domain.OutcomePending, "hard_require.delete", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := pol.Evaluate(cfg, domain.PolicyInput{Patch: mustParse(t, tc.patch), TaskType: tc.task}, nil, t0)
			if d.Outcome != tc.outcome || d.Rule != tc.rule {
				t.Fatalf("got %s by %s (%s), want %s by %s", d.Outcome, d.Rule, d.Reason, tc.outcome, tc.rule)
			}
			if tc.reason != "" && d.Reason != tc.reason {
				t.Errorf("reason %q, want %q", d.Reason, tc.reason)
			}
		})
	}
}

func TestAllowRuleNeverCoversShell(t *testing.T) {
	pol := mustPolicy(t, "version: 1\nrules:\n  - {name: all, when: 'true', decision: allow, reason: fine}\n")
	d := pol.Evaluate(domain.PolicyConfig{}, domain.PolicyInput{Patch: mustParse(t, `[{"type":"shell_command","action":"run","target":"ls docs"}]`)}, nil, t0)
	if d.Outcome != domain.OutcomePending || d.Rule != RuleShellNotByRule {
		t.Fatalf("got %s by %s", d.Outcome, d.Rule)
	}
}

func TestParseErrorsNameTheRule(t *testing.T) {
	tests := []struct{ name, src, rule, field, text string }{
		{"bad CEL", "version: 1\nrules:\n  - {name: broken, when: 'paths.exists(p, ', decision: deny, reason: x}\n", "broken", "when", "Syntax error"},
		{"unknown variable", "version: 1\nrules:\n  - {name: typo, when: 'pathz == []', decision: deny, reason: x}\n", "typo", "when", "undeclared reference to 'pathz'"},
		{"op in a patch rule", "version: 1\nrules:\n  - {name: noop, when: 'op.type == \"x\"', decision: deny, reason: x}\n", "noop", "when", "undeclared reference to 'op'"},
		{"not a bool", "version: 1\nrules:\n  - {name: str, when: 'route', decision: deny, reason: x}\n", "str", "when", "must be of type bool"},
		{"detail not a string", "version: 1\nrules:\n  - {name: det, when: 'true', decision: deny, detail: '1'}\n", "det", "detail", "must be of type string"},
		{"bad decision", "version: 1\nrules:\n  - {name: dec, when: 'true', decision: maybe, reason: x}\n", "dec", "decision", "must be deny, require or allow"},
		{"duplicate", "version: 1\nrules:\n  - {name: a, when: 'true', decision: deny, reason: x}\n  - {name: a, when: 'true', decision: deny, reason: x}\n", "a", "name", "used twice"},
		{"no reason", "version: 1\nrules:\n  - {name: r, when: 'true', decision: deny}\n", "r", "reason", "required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			var re *RuleError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a RuleError", err)
			}
			if re.Rule != tc.rule || re.Field != tc.field || !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), `rule "`+tc.rule+`"`) {
				t.Errorf("err = %v, want rule %s field %s containing %q", err, tc.rule, tc.field, tc.text)
			}
		})
	}
	for _, src := range []string{"version: 2\nrules: []\n", "version: 1\nrulez: []\n", "version: 1\nrules: [\n"} {
		if _, err := Parse([]byte(src)); err == nil {
			t.Errorf("Parse(%q) accepted", src)
		}
	}
}

// The shipped rules speak with the built-in checks' own reasons, in the reader's language; a
// rule its operator wrote, or changed, speaks with its author's words.
func TestRuleReasonsAreTheBuiltInOrTheOperators(t *testing.T) {
	cfg := domain.PolicyConfig{HardDenyPaths: []string{".env"}}
	env := domain.PolicyInput{Patch: mustParse(t, `[{"type":"file_edit","action":"update","target":".env","content":"x"}]`)}
	d := userRules(t).Evaluate(cfg, env, nil, t0)
	if d.Rule != domain.RuleHardDenyPath || d.ReasonCode != domain.CodeDenyPath ||
		d.ReasonIn("ja") != "操作 1（file_edit update）は .env に触れます。このパスは常に禁止されています（.env）" {
		t.Errorf("shipped deny rule: %+v / %q", d, d.ReasonIn("ja"))
	}
	changed := mustPolicy(t, strings.Replace(string(DefaultSource()), `reason: "{detail}"`, `reason: "secrets stay out: {detail}"`, 1))
	d = changed.Evaluate(cfg, env, nil, t0)
	if d.Rule != domain.RuleHardDenyPath || d.ReasonCode != "" || d.ReasonIn("ja") != "secrets stay out: operation 1 (file_edit update) touches .env, which is never allowed (.env)" {
		t.Errorf("changed deny rule: %+v", d)
	}
	billing := domain.PolicyInput{Patch: mustParse(t, `[{"type":"file_edit","action":"update","target":"billing/x.go","content":"x"}]`)}
	d = userRules(t).Evaluate(cfg, billing, nil, t0)
	if d.ReasonCode != domain.CodeNeedsPerson || d.ReasonIn("ja") != "人の承認が必要です: billing-needs-a-person（billing code is reviewed by a person）" ||
		d.Hits[0].TextIn("ja") != "billing-needs-a-person: billing code is reviewed by a person" {
		t.Errorf("operator's requirement: %+v / %q / %q", d, d.ReasonIn("ja"), d.Hits[0].TextIn("ja"))
	}
	// A shipped requirement whose detail the operator changed shows their detail.
	own := mustPolicy(t, strings.Replace(string(DefaultSource()), `detail: op.details["delete"]`, `detail: '"deleting needs a second look"'`, 1))
	d = own.Evaluate(cfg, domain.PolicyInput{Patch: mustParse(t, `[{"type":"file_edit","action":"delete","target":"docs/a.md"}]`)}, nil, t0)
	if d.Rule != "hard_require.delete" || d.Hits[0].Code != "" || d.Hits[0].TextIn("ja") != "delete: deleting needs a second look" {
		t.Errorf("changed requirement: %+v", d.Hits)
	}
	// A rule allowing a shell command is overruled in the reader's language.
	d = mustPolicy(t, "version: 1\nrules:\n  - {name: all, when: 'true', decision: allow, reason: fine}\n").Evaluate(domain.PolicyConfig{},
		domain.PolicyInput{Patch: mustParse(t, `[{"type":"shell_command","action":"run","target":"ls docs"}]`)}, nil, t0)
	if got := d.ReasonIn("ja"); got != "シェルコマンド: ルール all はこのパッチを許可しますが、操作 1 はシェルコマンドです。シェルを自動承認できるのは ops=shell を含む Auto-Approve だけです" {
		t.Errorf("shell by rule: %q", got)
	}
}
