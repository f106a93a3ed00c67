package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

func TestNoticesPostgres(t *testing.T) { runNoticeContract(t, openPostgres) }

// runNoticeContract: a decision made outside the requester's chat, or an expiry, records one
// notice in the decision's transaction, with the job's trace; a notice is claimed by one
// dispatcher at a time, due again after the claim's retry time, and done for good; notices
// survive a restart.
func runNoticeContract(t *testing.T, open func(*testing.T) backend) {
	b, c := open(t), newClock()
	svc := newService(t, b.store, c)
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	for i := 1; i <= 4; i++ {
		request(t, svc, fmt.Sprintf("job_20260301_%03d", i), docsPatch) // session line:Uapprover
	}
	if _, err := svc.RequestApproval(ctx, app.RequestInput{JobID: "job_20260301_005", Patch: docsPatch, SessionID: "line:Uapprover",
		Channel: "line", RequestedBy: approver}); err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	mustDecide := func(_ domain.Job, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	mustDecide(svc.Approve(bg, "job_20260301_001", approver, "line:Uapprover")) // in the requester's chat: nothing owed
	mustDecide(svc.Approve(bg, "job_20260301_002", approver, "slack:C1:1.0"))
	mustDecide(svc.Deny(bg, "job_20260301_003", approver, "no", ""))
	mustDecide(svc.Approve(bg, "job_20260301_005", approver, ""))
	if _, err := svc.Deny(bg, "job_20260301_002", approver, "late", "slack:C1:1.0"); err == nil {
		t.Fatal("a second decision was accepted")
	}
	c.advance(31 * time.Minute)
	if n, err := svc.Sweep(bg); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v", n, err)
	}
	now := c.now()
	due, err := b.store.DueNotices(bg, now, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]domain.Status{"job_20260301_002": domain.StatusGranted, "job_20260301_003": domain.StatusDenied,
		"job_20260301_004": domain.StatusExpired, "job_20260301_005": domain.StatusGranted}
	if len(due) != len(want) {
		t.Fatalf("due notices %+v, want %v", due, want)
	}
	for _, n := range due {
		if want[n.JobID] != n.Status || n.SessionID != "line:Uapprover" || n.Attempts != 0 || n.At.IsZero() {
			t.Errorf("notice %+v", n)
		}
		wantTrace := ""
		if n.JobID == "job_20260301_005" {
			wantTrace = telemetry.TraceParent(ctx)
		}
		if n.TraceParent != wantTrace {
			t.Errorf("notice of %s has trace %q, want %q", n.JobID, n.TraceParent, wantTrace)
		}
	}
	assertConsistent(t, b.store, "job_20260301_002")

	id := "job_20260301_002"
	if ok, err := b.store.ClaimNotice(bg, id, now, now.Add(5*time.Second)); err != nil || !ok {
		t.Fatalf("claim = %v, %v", ok, err)
	}
	if ok, _ := b.store.ClaimNotice(bg, id, now, now.Add(5*time.Second)); ok {
		t.Fatal("a claimed notice was claimed again before its retry time")
	}
	if due, _ := b.store.DueNotices(bg, now, 10); len(due) != 3 {
		t.Fatalf("%d due while one is claimed, want 3", len(due))
	}
	st := b.reopen(t)
	later := now.Add(5 * time.Second)
	due, err = st.DueNotices(bg, later, 1)
	if err != nil || len(due) != 1 {
		t.Fatalf("after a restart: %+v, %v", due, err)
	}
	all, _ := st.DueNotices(bg, later, 10)
	var again *domain.Notice
	for i := range all {
		if all[i].JobID == id {
			again = &all[i]
		}
	}
	if again == nil || again.Attempts != 1 {
		t.Fatalf("the claimed notice after its retry time: %+v", all)
	}
	if ok, err := st.ClaimNotice(bg, id, later, later.Add(10*time.Second)); err != nil || !ok {
		t.Fatalf("reclaim = %v, %v", ok, err)
	}
	if err := st.NoticeDone(bg, id, later, "sent"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := st.ClaimNotice(bg, id, later.Add(time.Hour), later.Add(2*time.Hour)); ok {
		t.Fatal("a done notice was claimed")
	}
	if due, _ := st.DueNotices(bg, later.Add(time.Hour), 10); len(due) != 3 {
		t.Fatalf("%d due after one was done, want 3", len(due))
	}
}
