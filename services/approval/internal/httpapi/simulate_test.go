//go:build !serveronly

package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// simulationPolicy is the default policy plus the user rules the golden files exercise.
func simulationPolicy(t *testing.T) *policy.Policy {
	t.Helper()
	p, err := policy.Parse(append(policy.DefaultSource(), []byte(`
  - name: never-prod
    scope: operation
    when: op.paths.exists(p, p.startsWith("deploy/prod/"))
    decision: deny
    reason: "production is deployed by hand ({detail})"
    detail: op.target

  - name: small-docs
    when: >-
      task_type == "docs" && ops.all(o, o.type == "file_edit" && o.paths.all(p, p.startsWith("docs/"))) &&
      stats.additions + stats.deletions < 50
    decision: allow
    reason: docs changes under 50 lines are fine
`)...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSimulateGolden posts each testdata/simulate/*.json and compares the answer with its
// .golden file; no job is created.
func TestSimulateGolden(t *testing.T) {
	pol := simulationPolicy(t)
	f := newFixtureWith(t, func(c *app.Config) {
		c.Policy = domain.PolicyConfig{HardDenyPaths: []string{".git"}, CostLimitUSD: 1, TokenLimit: 100000}
		c.Engine = pol
	})

	inputs, err := filepath.Glob("testdata/simulate/*.json")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var body map[string]any
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatal(err)
			}
			code, got := f.do(t, http.MethodPost, "/v1/policy/simulate", token, body)
			if code != http.StatusOK {
				t.Fatalf("status %d: %v", code, got)
			}
			if got["policy_hash"] != pol.Hash() {
				t.Errorf("policy_hash %v, want %s", got["policy_hash"], pol.Hash())
			}
			// The hash changes with the default policy file; the golden files keep a placeholder.
			got["policy_hash"] = "(policy hash)"
			out, _ := json.MarshalIndent(got, "", "  ")
			out = append(out, '\n')
			golden := strings.TrimSuffix(in, ".json") + ".golden"
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("answer differs from %s:\n%s", golden, out)
			}
		})
	}
	if jobs, err := f.store.List(context.Background(), app.ListFilter{Limit: 10}); err != nil || len(jobs) != 0 {
		t.Errorf("simulation created jobs: %v %v", jobs, err)
	}
}

func TestSimulateNeedsAnApprover(t *testing.T) {
	f := newFixture(t)
	body := map[string]any{"patch": `[{"type":"file_edit","action":"update","target":"docs/a","content":"x"}]`}
	if code, _ := f.do(t, http.MethodPost, "/v1/policy/simulate", "", body); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	if code, _ := f.do(t, http.MethodPost, "/v1/policy/simulate", "not-an-approver-token-0123456789", body); code != http.StatusForbidden {
		t.Errorf("unknown token: %d", code)
	}
	if code, m := f.do(t, http.MethodPost, "/v1/policy/simulate", token, map[string]any{"patch": "not a patch"}); code != http.StatusBadRequest {
		t.Errorf("bad patch: %d %v", code, m)
	}
	// Without a policy file (the built-in policy) the answer has no facts but the same decision.
	code, m := f.do(t, http.MethodPost, "/v1/policy/simulate", token, body)
	if code != http.StatusOK || m["outcome"] != "pending" || m["rule"] != domain.RuleAskNoGrant {
		t.Errorf("built-in policy: %d %v", code, m)
	}
}
