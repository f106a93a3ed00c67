package service_test

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"

	_ "modernc.org/sqlite"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
)

// TestPeriodicAuditCheckReportsTampering: the running service verifies its log on its own and
// exports what it found; an approver's row edited in the database shows up without anyone asking.
func TestPeriodicAuditCheckReportsTampering(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	base, _ := runInProcess(t, map[string]string{"PICOCLAW_APPROVAL_SQLITE_PATH": path, "PICOCLAW_APPROVAL_AUDIT_VERIFY_INTERVAL": "50ms"})
	c := approvalv1connect.NewApprovalServiceClient(http.DefaultClient, base, testinfra.AsSuite(t, svcauth.Approval))
	ctx := context.Background()
	if _, err := c.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{Proposal: &commonv1.Proposal{JobId: "job_20260301_001",
		Patch: `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"x"}]`}}); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, base, "picoclaw_approval_audit_last_verified_timestamp_seconds", func(v float64) bool { return v > 0 })
	if got := scrape(t, base)["picoclaw_approval_audit_tampered_streams"]; got != 0 {
		t.Fatalf("picoclaw_approval_audit_tampered_streams = %v on an untouched log", got)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE approval_jobs SET status = 'granted', approver = 'Umallory' WHERE job_id = 'job_20260301_001'`); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, base, "picoclaw_approval_audit_tampered_streams", func(v float64) bool { return v == 1 })
	// The row now claims a grant the log never recorded: the claim is refused, not executed.
	if _, err := c.ClaimJob(ctx, &approvalv1.ClaimJobRequest{JobId: "job_20260301_001", ExecutorId: "ex1"}); err == nil {
		t.Fatal("a job whose row was edited to granted was claimed")
	}
}

// waitMetric polls /metrics until the series satisfies ok (the check runs on its own schedule).
func waitMetric(t *testing.T, base, series string, ok func(float64) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if v, found := scrape(t, base)[series]; found && ok(v) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached the expected value: %v", series, scrape(t, base)[series])
		}
		time.Sleep(25 * time.Millisecond)
	}
}
