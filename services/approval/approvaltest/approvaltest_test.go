package approvaltest_test

import (
	"strings"
	"testing"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/services/approval/approvaltest"
)

func TestStartServesTheRealService(t *testing.T) {
	s := approvaltest.Start(t, approvaltest.WithApprovers("line", "Uowner"))
	ctx := t.Context()
	owner := &commonv1.Actor{Id: "Uowner", Channel: "line"}
	req, err := s.Client.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{
		Proposal: &commonv1.Proposal{JobId: "job_20260101_001", Plan: "add a guide",
			Patch: `[{"type":"file_edit","action":"create","target":"docs/guide.md","content":"# Guide\n"}]`},
		SessionId: "line:Uowner", Channel: "line", RequestedBy: owner})
	if err != nil {
		t.Fatal(err)
	}
	if req.GetOutcome() != approvalv1.Outcome_OUTCOME_PENDING || req.GetJob().GetContentHash() == "" {
		t.Fatalf("request = %v", req)
	}
	if _, err := s.Client.Approve(ctx, &approvalv1.ApproveRequest{JobId: "job_20260101_001", Actor: &commonv1.Actor{Id: "Ustranger", Channel: "line"}}); err == nil {
		t.Fatal("a stranger approved")
	}
	if _, err := s.Client.Approve(ctx, &approvalv1.ApproveRequest{JobId: "job_20260101_001", Actor: owner}); err != nil {
		t.Fatal(err)
	}
	claim, err := s.Client.ClaimJob(ctx, &approvalv1.ClaimJobRequest{JobId: "job_20260101_001", ExecutorId: "executor"})
	if err != nil || claim.GetContentHash() != req.GetJob().GetContentHash() {
		t.Fatalf("claim = %v, %v", claim, err)
	}
	evs, err := s.Client.ListJobEvents(ctx, &approvalv1.ListJobEventsRequest{JobId: "job_20260101_001"})
	if err != nil || !evs.GetChainValid() {
		t.Fatalf("events = %v, %v", evs, err)
	}
	var types []string
	for _, e := range evs.GetEvents() {
		types = append(types, e.GetType())
	}
	if want := "requested,decision_rejected,granted,claimed"; strings.Join(types, ",") != want {
		t.Fatalf("events = %v, want %s", types, want)
	}
}
