package service_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/service"
)

const brokenPolicy = "version: 1\nrules:\n  - {name: broken-rule, when: 'paths.exists(p, ', decision: deny, reason: x}\n"

func TestInvalidPolicyRefusesToStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(brokenPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := service.DefaultConfig()
	cfg.Approval.PolicyFile = file
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "approval.policy_file") || !strings.Contains(err.Error(), `rule "broken-rule": when:`) ||
		!strings.Contains(err.Error(), "Syntax error") {
		t.Fatalf("Validate = %v", err)
	}
	if err := service.Run(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), `rule "broken-rule"`) {
		t.Fatalf("Run = %v", err)
	}
}

func simulate(t *testing.T, pubBase string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, pubBase+"/v1/policy/simulate",
		strings.NewReader(`{"patch":"[{\"type\":\"file_edit\",\"action\":\"update\",\"target\":\"deploy/prod/a\",\"content\":\"x\"}]"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+scrapeToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("simulate: %s %v", resp.Status, err)
	}
	return m
}

// TestPolicyReload: a changed file takes effect without a restart; an invalid one keeps the
// previous policy and counts a reload failure.
func TestPolicyReload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, service.DefaultPolicy(), 0o600); err != nil {
		t.Fatal(err)
	}
	base, pub := runInProcess(t, map[string]string{"PICOCLAW_APPROVAL_POLICY_FILE": file})
	first := simulate(t, pub)
	if first["outcome"] != "pending" || first["rule"] != "ask.no_grant" {
		t.Fatalf("default policy: %v", first)
	}
	prod := string(service.DefaultPolicy()) + "\n  - {name: never-prod, when: 'paths.exists(p, p.startsWith(\"deploy/prod/\"))', decision: deny, reason: by hand}\n"
	if err := os.WriteFile(file, []byte(prod), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return simulate(t, pub)["rule"] == "never-prod" })
	second := simulate(t, pub)
	if second["policy_hash"] == first["policy_hash"] || second["outcome"] != "refused" {
		t.Fatalf("after reload: %v", second)
	}
	if err := os.WriteFile(file, []byte(brokenPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return scrape(t, base)["picoclaw_approval_policy_reload_failures_total"] == 1 })
	if kept := simulate(t, pub); kept["policy_hash"] != second["policy_hash"] || kept["rule"] != "never-prod" {
		t.Fatalf("an invalid reload replaced the policy: %v", kept)
	}

	// A decided job records the deciding rule and the policy hash: RPC answer, RPC job, REST job, event.
	c := approvalv1connect.NewApprovalServiceClient(http.DefaultClient, base, testinfra.AsSuite(t, svcauth.Approval))
	res, err := c.RequestApproval(context.Background(), &approvalv1.RequestApprovalRequest{Proposal: &commonv1.Proposal{
		JobId: "job_20260301_001", Plan: "prod", Patch: `[{"type":"file_edit","action":"update","target":"deploy/prod/a","content":"x"}]`}})
	if err != nil || res.GetOutcome() != approvalv1.Outcome_OUTCOME_REFUSED || res.GetPolicyRule() != "never-prod" || res.GetPolicyHash() != second["policy_hash"] {
		t.Fatalf("request: %v %v", res, err)
	}
	if res.GetJob().GetPolicyHash() != second["policy_hash"] {
		t.Errorf("job policy_hash %q", res.GetJob().GetPolicyHash())
	}
	req, _ := http.NewRequest(http.MethodGet, pub+"/v1/jobs/job_20260301_001/events", nil)
	req.Header.Set("Authorization", "Bearer "+scrapeToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var evs struct {
		Events []struct {
			Type       string          `json:"type"`
			PolicyRule string          `json:"policy_rule"`
			Payload    json.RawMessage `json:"payload"`
		} `json:"events"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&evs); err != nil || len(evs.Events) != 2 {
		t.Fatalf("events: %+v %v", evs, err)
	}
	refused := evs.Events[1]
	if refused.Type != "refused" || refused.PolicyRule != "never-prod" || !strings.Contains(string(refused.Payload), second["policy_hash"].(string)) {
		t.Errorf("decision event %+v %s", refused, refused.Payload)
	}
	req, _ = http.NewRequest(http.MethodGet, pub+"/v1/jobs/job_20260301_001", nil)
	req.Header.Set("Authorization", "Bearer "+scrapeToken)
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	var job map[string]any
	if err := json.NewDecoder(resp2.Body).Decode(&job); err != nil || job["policy_hash"] != second["policy_hash"] || job["policy_rule"] != "never-prod" {
		t.Errorf("REST job %v %v", job, err)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
	}
}
