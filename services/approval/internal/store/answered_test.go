package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// An answer without a patch is recorded as completed without execution, on both stores: the
// job is answered, its chain verifies, a retry is idempotent, and nothing can approve or run it.
func TestAnswerIsRecordedAsCompletedWithoutExecution(t *testing.T) {
	onBothStores(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c := newClock()
		svc := newService(t, b.store, c)
		in := app.RequestInput{JobID: "job_20260301_041", Plan: "レビュー: calc.go の Sub は負数で正しい", TaskType: "review", Order: "order2",
			Route: "CODE2", SessionID: "line:Uapprover", Channel: "line", RequestedBy: domain.Actor{ID: "chat-mio", Channel: "system"}, AnswerOnly: true}
		res, err := svc.RequestApproval(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if res.Decision.Outcome != domain.OutcomeAnswered || res.Job.Status != domain.StatusAnswered || res.Job.Plan != in.Plan {
			t.Fatalf("recorded %+v / %+v", res.Decision, res.Job)
		}
		assertConsistent(t, b.store, in.JobID)
		evs := events(t, b.store, in.JobID)
		if len(evs) != 2 || evs[0].Type != domain.EventRequested || evs[1].Type != domain.EventAnswered {
			t.Fatalf("events %+v", evs)
		}
		if again, err := svc.RequestApproval(ctx, in); err != nil || again.Job.Version != res.Job.Version {
			t.Fatalf("retried record: %+v, %v", again.Job, err)
		}
		if _, err := svc.Approve(ctx, in.JobID, approver, ""); !errors.Is(err, domain.ErrConflict) {
			t.Errorf("approve of an answer: %v, want ErrConflict", err)
		}
		if _, err := svc.ClaimJob(ctx, in.JobID, "executor"); !errors.Is(err, domain.ErrConflict) {
			t.Errorf("claim of an answer: %v, want ErrConflict", err)
		}
		in.Patch = docsPatch
		in.JobID = "job_20260301_042"
		if _, err := svc.RequestApproval(ctx, in); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("an answer with a patch: %v, want ErrInvalid", err)
		}
	})
}
