package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// BenchmarkPolicy20Rules evaluates a 20-rule policy (the default's hard-deny and hard-require
// rules cut to 20, plus user rules) on a typical five-operation patch and reports the p99 of
// one evaluation (goal: at most 50 µs).
func BenchmarkPolicy20Rules(b *testing.B) {
	def, err := Parse(DefaultSource())
	if err != nil {
		b.Fatal(err)
	}
	// The default's 21 rules less four operation requirements (the code still enforces them
	// after the rules), plus three user rules: 20.
	var rules []Rule
	dropped := 0
	for _, r := range def.Rules() {
		if r.Scope == ScopeOperation && r.Decision == Require && dropped < 4 && r.Name != "hard_require.delete" {
			dropped++
			continue
		}
		rules = append(rules, r)
	}
	rules = append(rules,
		Rule{Name: "never-prod", Scope: ScopeOperation, When: `op.paths.exists(p, p.startsWith("deploy/prod/"))`, Decision: Deny, Reason: "production is deployed by hand"},
		Rule{Name: "billing", Scope: ScopePatch, When: `paths.exists(p, p.startsWith("billing/"))`, Decision: Require, Reason: "billing is reviewed by a person"},
		Rule{Name: "small-docs", Scope: ScopePatch, When: `task_type == "ops" && ops.all(o, o.paths.all(p, p.startsWith("docs/"))) && stats.additions < 50`,
			Decision: Allow, Reason: "small docs changes are fine"})
	pol := mustPolicyFromRules(b, rules)
	if n := len(pol.Rules()); n != 20 {
		b.Fatalf("%d rules", n)
	}
	cfg := domain.PolicyConfig{HardDenyPaths: []string{".git", "secrets/"}, CostLimitUSD: 1, TokenLimit: 100000}
	p := mustParse(b, `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"x\ny\n"},
		{"type":"file_edit","action":"create","target":"docs/b.md","content":"new\n"},
		{"type":"file_edit","action":"update","target":"src/main.go","content":"package main\n"},
		{"type":"git_operation","action":"add","target":"docs/a.md"},
		{"type":"git_operation","action":"commit","content":"docs"}]`)
	in := domain.PolicyInput{Patch: p, TaskType: "docs", Route: "CODE1"}
	grant := &domain.Grant{ID: "g", PathPrefixes: []string{"docs", "src"}, ExpiresAt: t0.Add(time.Hour)}
	durations := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		d := pol.Evaluate(cfg, in, grant, t0)
		durations = append(durations, time.Since(start))
		if d.Outcome != domain.OutcomeAutoApproved {
			b.Fatalf("decision %+v", d)
		}
	}
	b.StopTimer()
	slices.Sort(durations)
	p99 := durations[len(durations)*99/100]
	b.ReportMetric(float64(p99.Nanoseconds())/1000, "p99-µs")
	b.ReportMetric(float64(durations[len(durations)/2].Nanoseconds())/1000, "p50-µs")
}

// mustPolicyFromRules compiles rules given as values (the benchmark trims a file to 20 rules).
func mustPolicyFromRules(b *testing.B, rules []Rule) *Policy {
	b.Helper()
	var sb strings.Builder
	sb.WriteString("version: 1\nrules:\n")
	for _, r := range rules {
		fmt.Fprintf(&sb, "  - name: %q\n    scope: %q\n    when: %q\n    decision: %q\n    reason: %q\n    detail: %q\n",
			r.Name, r.Scope, r.When, r.Decision, r.Reason, r.Detail)
	}
	p, err := Parse([]byte(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	return p
}
