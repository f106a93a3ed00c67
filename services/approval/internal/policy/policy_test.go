package policy

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func mustParse(t testing.TB, s string) *patch.Patch {
	t.Helper()
	p, err := patch.Parse(s, patch.Options{BroadOverwriteFiles: 3})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustPolicy(t testing.TB, src string) *Policy {
	t.Helper()
	p, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type evalCase struct {
	name    string
	patch   string
	grant   *domain.Grant
	in      domain.PolicyInput
	outcome domain.Outcome
	rule    string
}

// evaluationCases is the policy table: the built-in Evaluate and the default policy file must
// both give these decisions.
func evaluationCases() (domain.PolicyConfig, []evalCase) {
	cfg := domain.PolicyConfig{HardDenyPaths: []string{".git", "secrets/"}, HardDenyCommands: []*regexp.Regexp{regexp.MustCompile(`\bmkfs\b`)},
		CostLimitUSD: 1, TokenLimit: 1000}
	docs := &domain.Grant{ID: "g1", PathPrefixes: []string{"docs"}, ExpiresAt: t0.Add(time.Hour)}
	any := &domain.Grant{ID: "g2", ExpiresAt: t0.Add(time.Hour)}
	shellAny := &domain.Grant{ID: "g3", AllowedOperations: []string{domain.OpsShell}, ExpiresAt: t0.Add(time.Hour)}
	shellDocs := &domain.Grant{ID: "g4", AllowedOperations: []string{domain.OpsShell}, PathPrefixes: []string{"docs"}, ExpiresAt: t0.Add(time.Hour)}
	tests := []evalCase{
		{"hard deny path beats grant", `[{"type":"file_edit","action":"update","target":".git/config","content":"x"}]`, any, domain.PolicyInput{}, domain.OutcomeRefused, domain.RuleHardDenyPath},
		{"hard deny nested .git", `[{"type":"git_operation","action":"add","target":"a/.git/HEAD"}]`, any, domain.PolicyInput{}, domain.OutcomeRefused, domain.RuleHardDenyPath},
		{"hard deny beats hard require", `[{"type":"file_edit","action":"delete","target":"secrets/k"}]`, nil, domain.PolicyInput{}, domain.OutcomeRefused, domain.RuleHardDenyPath},
		{".gitignore is fine", `[{"type":"file_edit","action":"update","target":".gitignore","content":"x"}]`, any, domain.PolicyInput{}, domain.OutcomeAutoApproved, domain.RuleAutoApprove},
		{"hard deny command", `[{"type":"shell_command","action":"run","target":"mkfs /dev/sda"}]`, any, domain.PolicyInput{}, domain.OutcomeRefused, domain.RuleHardDenyCommand},
		{"delete needs a person", `[{"type":"file_edit","action":"delete","target":"docs/a"}]`, docs, domain.PolicyInput{}, domain.OutcomePending, "hard_require.delete"},
		{"second op is checked too", `[{"type":"file_edit","action":"update","target":"docs/a","content":"x"},{"type":"browser","action":"chrome_click","target":"#b"}]`, any, domain.PolicyInput{}, domain.OutcomePending, "hard_require.browser"},
		{"cost", `[{"type":"file_edit","action":"update","target":"docs/a","content":"x"}]`, any, domain.PolicyInput{Cost: domain.CostHint{EstimatedCostUSD: 1.5}}, domain.OutcomePending, domain.RuleCostOverLimit},
		{"no grant asks", `[{"type":"file_edit","action":"update","target":"docs/a","content":"x"}]`, nil, domain.PolicyInput{}, domain.OutcomePending, domain.RuleAskNoGrant},
		{"expired grant asks", `[{"type":"file_edit","action":"update","target":"docs/a","content":"x"}]`, &domain.Grant{ID: "old", ExpiresAt: t0}, domain.PolicyInput{}, domain.OutcomePending, domain.RuleAskNoGrant},
		{"docs grant covers docs", `[{"type":"file_edit","action":"update","target":"docs/a/b.md","content":"x"}]`, docs, domain.PolicyInput{}, domain.OutcomeAutoApproved, domain.RuleAutoApprove},
		{"docs grant does not cover docsx", `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"x"},{"type":"file_edit","action":"update","target":"docsx/b.md","content":"x"}]`, docs, domain.PolicyInput{}, domain.OutcomePending, domain.RuleScopePath},
		{"shell is outside a path grant", `[{"type":"shell_command","action":"run","target":"make docs"}]`, docs, domain.PolicyInput{}, domain.OutcomePending, domain.RuleScopeOperation},
		{"shell needs ops=shell", `[{"type":"shell_command","action":"run","target":"make docs"}]`, any, domain.PolicyInput{}, domain.OutcomePending, domain.RuleScopeOperation},
		{"ops=shell without paths never covers shell", `[{"type":"shell_command","action":"run","target":"make docs"}]`, shellAny, domain.PolicyInput{}, domain.OutcomePending, domain.RuleScopeOperation},
		{"ops=shell with paths covers a read-only command", `[{"type":"shell_command","action":"run","target":"ls docs"},{"type":"file_edit","action":"update","target":"docs/a","content":"x"}]`, shellDocs, domain.PolicyInput{}, domain.OutcomeAutoApproved, domain.RuleAutoApprove},
		{"ops=shell does not cover make", `[{"type":"shell_command","action":"run","target":"make docs"},{"type":"file_edit","action":"update","target":"docs/a","content":"x"}]`, shellDocs, domain.PolicyInput{}, domain.OutcomePending, domain.RuleScopeShellCommand},
		{"ops=shell never covers a deletion", `[{"type":"shell_command","action":"run","target":"bash -c 'rm -rf docs'"}]`, shellDocs, domain.PolicyInput{}, domain.OutcomePending, "hard_require.delete"},
		{"ops=shell never covers network", `[{"type":"shell_command","action":"run","target":"env X=1 curl -s https://example.com"}]`, shellDocs, domain.PolicyInput{}, domain.OutcomePending, "hard_require.network"},
		{"ops=shell never covers curl | sh", `[{"type":"shell_command","action":"run","target":"curl -s x | sh"}]`, shellDocs, domain.PolicyInput{}, domain.OutcomePending, "hard_require.network"},
		{"ops=shell never covers a daemon", `[{"type":"shell_command","action":"run","target":"nohup ./srv &"}]`, shellDocs, domain.PolicyInput{}, domain.OutcomePending, "hard_require.background"},
		{"ops=shell never covers eval", `[{"type":"shell_command","action":"run","target":"eval \"$X\""}]`, shellDocs, domain.PolicyInput{}, domain.OutcomePending, "hard_require.dynamic_command"},
		{"unparsable shell is never automatic", `[{"type":"shell_command","action":"run","target":"echo 'oops"}]`, shellDocs, domain.PolicyInput{}, domain.OutcomePending, "hard_require.shell_unparsed"},
		{"shell writing outside", `[{"type":"shell_command","action":"run","target":"echo x >> ~/.profile"}]`, shellDocs, domain.PolicyInput{}, domain.OutcomePending, "hard_require.outside_workspace"},
		{"shell privilege", `[{"type":"shell_command","action":"run","target":"sudo make install"}]`, shellDocs, domain.PolicyInput{}, domain.OutcomePending, "hard_require.privilege"},
		{"shell chmod", `[{"type":"shell_command","action":"run","target":"chmod 777 docs"}]`, shellDocs, domain.PolicyInput{}, domain.OutcomePending, "hard_require.permission"},
		{"shell into .GIT is refused", `[{"type":"shell_command","action":"run","target":"echo x > .GIT/hooks/pre-commit"}]`, shellDocs, domain.PolicyInput{}, domain.OutcomeRefused, domain.RuleHardDenyPath},
		{".GIT/config is refused", `[{"type":"file_edit","action":"update","target":".GIT/config","content":"x"}]`, any, domain.PolicyInput{}, domain.OutcomeRefused, domain.RuleHardDenyPath},
		{"sub/.GiT/config is refused", `[{"type":"file_edit","action":"update","target":"sub/.GiT/config","content":"x"}]`, any, domain.PolicyInput{}, domain.OutcomeRefused, domain.RuleHardDenyPath},
		{".git. is refused", `[{"type":"file_edit","action":"create","target":".git./hooks/pre-commit","content":"x"}]`, any, domain.PolicyInput{}, domain.OutcomeRefused, domain.RuleHardDenyPath},
		{".git without the config entry is refused", `[{"type":"git_operation","action":"add","target":".Git/config"}]`, any, domain.PolicyInput{}, domain.OutcomeRefused, domain.RuleHardDenyPath},
		{"deny paths ignore letter case", `[{"type":"file_edit","action":"update","target":"Secrets./k","content":"x"}]`, any, domain.PolicyInput{}, domain.OutcomeRefused, domain.RuleHardDenyPath},
		{"push needs a person", `[{"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git","metadata":{"branch":"docs"}}]`, any, domain.PolicyInput{}, domain.OutcomePending, "hard_require.push_public"},
		{"git commit is inside a path grant", `[{"type":"git_operation","action":"add","target":"docs/a"},{"type":"git_operation","action":"commit","content":"m"}]`, docs, domain.PolicyInput{}, domain.OutcomeAutoApproved, domain.RuleAutoApprove},
		{"task type scope", `[{"type":"file_edit","action":"update","target":"docs/a","content":"x"}]`, &domain.Grant{ID: "g", TaskTypes: []string{"docs"}, ExpiresAt: t0.Add(time.Hour)}, domain.PolicyInput{TaskType: "codegen"}, domain.OutcomePending, domain.RuleScopeTaskType},
		{"route scope", `[{"type":"file_edit","action":"update","target":"docs/a","content":"x"}]`, &domain.Grant{ID: "g", Routes: []string{"CODE1"}, ExpiresAt: t0.Add(time.Hour)}, domain.PolicyInput{Route: "CODE3"}, domain.OutcomePending, domain.RuleScopeRoute},
		{"denied operation", `[{"type":"shell_command","action":"run","target":"make"}]`, &domain.Grant{ID: "g", DeniedOperations: []string{"shell_command"}, ExpiresAt: t0.Add(time.Hour)}, domain.PolicyInput{}, domain.OutcomePending, domain.RuleScopeDeniedOperation},
	}
	return cfg, tests
}

// TestPolicyTable runs the policy table against the built-in Evaluate and against the shipped
// default policy file: same outcome, rule, reason and hits.
func TestPolicyTable(t *testing.T) {
	cfg, tests := evaluationCases()
	def := mustPolicy(t, string(DefaultSource()))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Patch = mustParse(t, tc.patch)
			builtin := domain.Evaluate(cfg, in, tc.grant, t0)
			fromFile := def.Evaluate(cfg, in, tc.grant, t0)
			for _, d := range []domain.Decision{builtin, fromFile} {
				if d.Outcome != tc.outcome || d.Rule != tc.rule {
					t.Errorf("got %s by %s (%s), want %s by %s", d.Outcome, d.Rule, d.Reason, tc.outcome, tc.rule)
				}
				if d.Reason == "" {
					t.Error("no reason given")
				}
				if d.Outcome == domain.OutcomeAutoApproved && d.GrantID != tc.grant.ID {
					t.Errorf("grant id %q, want %q", d.GrantID, tc.grant.ID)
				}
			}
			if fromFile.PolicyHash != def.Hash() || !strings.HasPrefix(def.Hash(), "sha256:") {
				t.Errorf("policy hash %q, want %q", fromFile.PolicyHash, def.Hash())
			}
			fromFile.PolicyHash = ""
			if !reflect.DeepEqual(builtin, fromFile) {
				t.Errorf("default policy file differs from the built-in policy:\n file    %+v\n builtin %+v", fromFile, builtin)
			}
		})
	}
}

// TestDefaultPolicyShipped checks config/policy.yaml is the embedded default.
func TestDefaultPolicyShipped(t *testing.T) {
	shipped, err := os.ReadFile("../../../../config/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(shipped) != string(DefaultSource()) {
		t.Error("config/policy.yaml differs from services/approval/internal/policy/default.yaml")
	}
}
