package policy

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// hostile policies try every way a policy file could make an operation automatic: an allow
// rule that matches everything (patch and operation scope), no rules at all, and the default
// rules with their requirements turned into allowances.
var hostile = map[string]string{
	"allow everything": `version: 1
rules:
  - name: yes
    when: "true"
    decision: allow
    reason: everything is fine
`,
	"allow every operation": `version: 1
rules:
  - name: every-op
    scope: operation
    when: "true"
    decision: allow
    reason: every operation is fine
`,
	"no rules":                            "version: 1\nrules: []\n",
	"requirements turned into allowances": strings.ReplaceAll(string(DefaultSource()), "decision: require", "decision: allow"),
	"denials turned into allowances":      strings.ReplaceAll(string(DefaultSource()), "decision: deny", "decision: allow"),
}

// TestNoRuleMakesHardRequireAutomatic: whatever the policy file, with or without the widest
// grant, an operation of the hard-require set is never auto-approved.
func TestNoRuleMakesHardRequireAutomatic(t *testing.T) {
	cfg := domain.PolicyConfig{HardDenyPaths: []string{".git", "secrets/"}, CostLimitUSD: 1, TokenLimit: 1000}
	grants := map[string]*domain.Grant{
		"no grant":   nil,
		"wide grant": {ID: "g", ExpiresAt: t0.Add(time.Hour)},
		"shell grant": {ID: "s", AllowedOperations: []string{domain.OpsShell}, PathPrefixes: []string{"docs", "."},
			ExpiresAt: t0.Add(time.Hour)},
		// "approve similar" grants: one scoped from a docs job as approval makes it, and one
		// naming every kind of the hard-require operations below (which approval never makes).
		"approve similar grant": similarGrant(t, `[{"type":"file_edit","action":"update","target":"docs/x","content":"x"},{"type":"file_edit","action":"delete","target":"docs/y"}]`),
		"approve similar grant naming every kind": {ID: "sim-all", SimilarTo: "job_20260301_001", PathPrefixes: []string{"docs", "origin"},
			OperationKinds: []string{"file_edit.update", "file_edit.delete", "file_edit.rename", "git_operation.push", "browser.chrome_click", "shell_command.run"},
			ExpiresAt:      t0.Add(time.Hour)},
	}
	hardRequire := []struct{ name, patch, want string }{
		{"delete", `[{"type":"file_edit","action":"delete","target":"docs/a"}]`, "hard_require.delete"},
		{"rename", `[{"type":"file_edit","action":"rename","target":"docs/a","metadata":{"to":"docs/b"}}]`, "hard_require.rename"},
		{"broad overwrite", `[{"type":"file_edit","action":"update","target":"docs/a","content":"x"},{"type":"file_edit","action":"update","target":"docs/b","content":"x"},{"type":"file_edit","action":"update","target":"docs/c","content":"x"},{"type":"file_edit","action":"update","target":"docs/d","content":"x"}]`, "hard_require.broad_overwrite"},
		{"secret", `[{"type":"file_edit","action":"update","target":"docs/a","content":"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}]`, "hard_require.send_sensitive"},
		{"push", `[{"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git","metadata":{"branch":"docs"}}]`, "hard_require.push_public"},
		{"force push", `[{"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git","metadata":{"branch":"docs","force":"true"}}]`, "hard_require.force_push"},
		{"browser", `[{"type":"browser","action":"chrome_click","target":"#b"}]`, "hard_require.browser"},
		{"shell", `[{"type":"shell_command","action":"run","target":"ls docs"}]`, ""},
		{"cost over limit", `[{"type":"file_edit","action":"update","target":"docs/a","content":"x"}]`, "hard_require.cost_over_limit"},
		{"declared browser", `[{"type":"file_edit","action":"update","target":"docs/a","content":"x"}]`, "hard_require.browser_declared"},
	}
	for pname, src := range hostile {
		pol := mustPolicy(t, src)
		for gname, g := range grants {
			for _, hr := range hardRequire {
				t.Run(pname+"/"+gname+"/"+hr.name, func(t *testing.T) {
					in := domain.PolicyInput{Patch: mustParse(t, hr.patch)}
					switch hr.name {
					case "cost over limit":
						in.Cost = domain.CostHint{EstimatedCostUSD: 5}
					case "declared browser":
						in.ProposalUsesBrowser = true
					}
					if g != nil && g.SimilarTo == "" && hr.name == "shell" && gname == "shell grant" {
						// The one case a grant may cover: ops=shell with a path scope and a
						// read-only command. No rule may do it without such a grant.
						return
					}
					d := pol.Evaluate(cfg, in, g, t0)
					if d.Outcome == domain.OutcomeAutoApproved {
						t.Fatalf("auto-approved by %s (%s)", d.Rule, d.Reason)
					}
					if hr.want != "" && d.Outcome == domain.OutcomePending && !hasHit(d, hr.want) {
						t.Errorf("pending by %s, hits %+v, want a hit %s", d.Rule, d.Hits, hr.want)
					}
				})
			}
		}
	}
}

func hasHit(d domain.Decision, rule string) bool {
	for _, h := range d.Hits {
		if h.Rule == rule {
			return true
		}
	}
	return false
}

// similarGrant is the grant "approve similar" makes from a job with this patch.
func similarGrant(t *testing.T, patchJSON string) *domain.Grant {
	t.Helper()
	p := mustParse(t, patchJSON)
	sc, err := domain.SimilarScopeOf(domain.Job{ID: "job_20260301_001", Operations: p.Operations})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(sc.OperationKinds, "file_edit.delete") {
		t.Fatalf("similar scope names a delete: %+v", sc)
	}
	return &domain.Grant{ID: "sim", SimilarTo: "job_20260301_001", PathPrefixes: sc.PathPrefixes, OperationKinds: sc.OperationKinds,
		ExpiresAt: t0.Add(time.Hour)}
}
