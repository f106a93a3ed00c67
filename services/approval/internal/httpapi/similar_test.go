//go:build !serveronly

package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
)

// TestRESTApproveSimilar: approve-similar over REST answers with the granted job and the grant
// scoped from it; the next similar job is auto-approved, a job outside the scope and a delete
// are not, and DELETE /v1/auto-approve ends the grant.
func TestRESTApproveSimilar(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	request := func(id, patch string) app.RequestResult {
		t.Helper()
		res, err := f.svc.RequestApproval(ctx, app.RequestInput{JobID: id, Patch: patch, TaskType: "docs", Route: "CODE1"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	request("job_20260301_001", `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"x"}]`)

	code, body := f.do(t, http.MethodPost, "/v1/jobs/job_20260301_001/approve-similar", token, map[string]string{"ttl": "48h"})
	if code != http.StatusBadRequest {
		t.Errorf("48h: %d %v", code, body)
	}
	code, body = f.do(t, http.MethodPost, "/v1/jobs/job_20260301_001/approve-similar?locale=en", token, map[string]string{"ttl": "45m"})
	if code != http.StatusOK {
		t.Fatalf("approve similar: %d %v", code, body)
	}
	job := body["job"].(map[string]any)
	grant := body["grant"].(map[string]any)
	if job["status"] != "granted" || grant["similar_to"] != "job_20260301_001" || !strings.Contains(body["status_text"].(string), "for 45m0s") {
		t.Errorf("answer %v", body)
	}
	if got := grant["path_prefixes"].([]any); len(got) != 1 || got[0] != "docs" {
		t.Errorf("paths %v", got)
	}
	if got := grant["operation_kinds"].([]any); len(got) != 1 || got[0] != "file_edit.update" {
		t.Errorf("kinds %v", got)
	}
	code, body = f.do(t, http.MethodGet, "/v1/auto-approve?locale=en", token, nil)
	if code != http.StatusOK || body["active"] != true || !strings.Contains(body["status_text"].(string), "approve similar: like job_20260301_001") {
		t.Errorf("status %d %v", code, body)
	}

	for id, tc := range map[string]struct{ patch, status string }{
		"job_20260301_002": {`[{"type":"file_edit","action":"update","target":"docs/b.md","content":"y"}]`, "auto_approved"},
		"job_20260301_003": {`[{"type":"file_edit","action":"update","target":"src/b.go","content":"y"}]`, "pending"},
		"job_20260301_004": {`[{"type":"file_edit","action":"delete","target":"docs/b.md"}]`, "pending"},
	} {
		if r := request(id, tc.patch); string(r.Job.Status) != tc.status {
			t.Errorf("%s: %s by %s, want %s", id, r.Job.Status, r.Decision.Rule, tc.status)
		}
	}
	code, body = f.do(t, http.MethodDelete, "/v1/auto-approve", token, nil)
	if code != http.StatusOK || body["active"] != false {
		t.Fatalf("off: %d %v", code, body)
	}
	if r := request("job_20260301_005", `[{"type":"file_edit","action":"update","target":"docs/c.md","content":"z"}]`); r.Job.Status != "pending" {
		t.Errorf("after off: %s by %s", r.Job.Status, r.Decision.Rule)
	}
}
