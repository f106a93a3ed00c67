package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// A cost confirmation waits for a person even under an Auto-Approve grant that covers
// everything, is answered in the chat that asked (a REST or console approval is refused and
// audited), and allows nothing similar.
func TestCostConfirmationWaitsForThePersonInTheChat(t *testing.T) {
	grant := &domain.Grant{ID: "g1", ExpiresAt: t0.Add(time.Hour), PathPrefixes: []string{"docs/", "README.md"}, TaskTypes: []string{"docs"}}
	svc, _, _ := newApp(t, &memGrants{g: grant})
	ctx := context.Background()
	in := app.RequestInput{JobID: "job_20260301_050", Order: "order3", Summary: "大きな移行", TaskType: "docs",
		Cost: domain.CostHint{EstimatedTokens: 90000, EstimatedCostUSD: 1.35}, CostConfirmation: true, SessionID: "line:U1", Channel: "line"}
	res, err := svc.RequestApproval(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Job.Status != domain.StatusPending || !res.Job.CostConfirmation || res.Decision.Rule != domain.RuleCostOverLimit {
		t.Fatalf("cost job = %+v, decision %+v", res.Job, res.Decision)
	}
	// The same request again (a retry) answers with the same job.
	if again, err := svc.RequestApproval(ctx, in); err != nil || again.Job.ID != res.Job.ID || again.Job.Version != res.Job.Version {
		t.Fatalf("retried request: %+v, %v", again.Job, err)
	}
	if _, err := svc.Approve(ctx, res.Job.ID, owner, ""); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("REST approval of a cost confirmation: %v", err)
	}
	if _, err := svc.Approve(ctx, res.Job.ID, owner, "line:Cother"); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("approval of a cost confirmation from another conversation: %v", err)
	}
	if _, err := svc.ApproveSimilar(ctx, res.Job.ID, owner, time.Hour, "line:U1"); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("approve similar of a cost confirmation: %v", err)
	}
	j, err := svc.Approve(ctx, res.Job.ID, owner, "line:U1")
	if err != nil || j.Status != domain.StatusGranted {
		t.Fatalf("approval in the chat: %+v, %v", j, err)
	}
	// Malformed requests are refused.
	for name, bad := range map[string]app.RequestInput{
		"no estimate": {JobID: "job_20260301_051", CostConfirmation: true},
		"a patch":     {JobID: "job_20260301_052", CostConfirmation: true, Patch: docs, Cost: domain.CostHint{EstimatedCostUSD: 1}},
	} {
		if _, err := svc.RequestApproval(ctx, bad); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
