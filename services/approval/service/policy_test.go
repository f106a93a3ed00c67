package service_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
	}
}
