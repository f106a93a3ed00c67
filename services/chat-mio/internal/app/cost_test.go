package app_test

import (
	"slices"
	"strings"
	"testing"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
)

// A coder call over the cost limit asks "continue at about $X?" as a job of its own: approving
// it makes the call (once, with the approved estimate, under a new job); denying it ends it;
// both decisions are in the audit log; a stranger cannot approve it.
func TestCostOverLimitAsksToContinue(t *testing.T) {
	e := newEnv(t)
	e.peers.Router.SetOverLimit(&commonv1.CostHint{EstimatedTokens: 12000, EstimatedCostUsd: 0.42, NearLimit: true})
	res := e.send(t, approver, codeMsg)
	id := res.GetJobId()
	mustContain(t, text(res), id, "約 $0.42", "続行しますか", "/approve "+id, "/deny "+id)
	acts := actions(res)
	if len(acts) != 2 || acts[0].GetKind() != commonv1.ActionKind_ACTION_KIND_APPROVE || acts[1].GetKind() != commonv1.ActionKind_ACTION_KIND_DENY {
		t.Fatalf("actions = %v (approve and deny only: nothing similar can be allowed from a cost question)", acts)
	}
	j := e.peers.Job(t, id)
	if !j.GetCostConfirmation() || j.GetStatus() != approvalv1.JobStatus_JOB_STATUS_PENDING || j.GetCostHint().GetEstimatedCostUsd() != 0.42 || j.GetPatch() != "" {
		t.Fatalf("cost job = %v", j)
	}
	if got := pendingOf(t, e); len(got) != 1 || got[0] != id {
		t.Fatalf("pending = %v", got)
	}
	calls := len(e.peers.Router.Requests())

	mustContain(t, text(e.send(t, stranger, "/approve "+id)), id)
	if len(e.peers.Router.Requests()) != calls || e.peers.Job(t, id).GetStatus() != approvalv1.JobStatus_JOB_STATUS_PENDING {
		t.Fatal("a stranger's /approve made the call")
	}

	res = e.send(t, approver, "/approve "+id)
	next := res.GetJobId()
	if next == id || next == "" {
		t.Fatalf("continuation job %q (cost job %s)", next, id)
	}
	mustContain(t, text(res), id, "約 $0.42", next, "/approve "+next)
	reqs := e.peers.Router.Requests()
	if len(reqs) != calls+1 {
		t.Fatalf("router calls after the go-ahead = %d, want 1", len(reqs)-calls)
	}
	last := reqs[len(reqs)-1]
	if last.GetConfirmedTokens() != 12000 || last.GetConfirmedCostUsd() != 0.42 || !strings.Contains(last.GetText(), "docs/guide.md を作って") {
		t.Fatalf("continuation request = %v", last)
	}
	if ev := e.peers.Events(t, id); !slices.Equal(ev, []string{"requested", "decision_rejected", "granted"}) {
		t.Fatalf("cost job events = %v", ev)
	}
	// The proposal it brought waits for a person as usual; the cost job is never run.
	if j := e.peers.Job(t, next); j.GetStatus() != approvalv1.JobStatus_JOB_STATUS_PENDING || j.GetCostConfirmation() {
		t.Fatalf("continued job = %v", j)
	}
	if e.peers.Executor.Calls() != 0 {
		t.Fatal("executor called for a cost confirmation")
	}
	// A second /approve of the cost job makes no second call.
	e.send(t, approver, "/approve "+id)
	if len(e.peers.Router.Requests()) != calls+1 || e.peers.Executor.Calls() != 0 {
		t.Fatal("a second /approve of the cost job called again")
	}

	// Deny ends it: no call.
	res = e.send(t, approver, codeMsg)
	id2 := res.GetJobId()
	calls = len(e.peers.Router.Requests())
	e.send(t, approver, "/deny "+id2+" 高すぎる")
	if len(e.peers.Router.Requests()) != calls {
		t.Fatal("a denied cost confirmation made the call")
	}
	if ev := e.peers.Events(t, id2); !slices.Equal(ev, []string{"requested", "denied"}) {
		t.Fatalf("denied cost job events = %v", ev)
	}
}

// Approving a cost question from another conversation is refused and makes no call there: the
// request, and its answer, belong to the conversation that asked.
func TestCostContinueOnlyInItsConversation(t *testing.T) {
	e := newEnv(t)
	e.peers.Router.SetOverLimit(&commonv1.CostHint{EstimatedTokens: 12000, EstimatedCostUsd: 0.42, NearLimit: true})
	id := e.send(t, approver, codeMsg).GetJobId()
	calls := len(e.peers.Router.Requests())
	res := e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: "line:Cgroup", Channel: "line", UserId: approver, Text: "/approve " + id})
	if len(e.peers.Router.Requests()) != calls {
		t.Fatalf("the go-ahead in another conversation made the call there: %q", text(res))
	}
	mustContain(t, text(res), id, "依頼したチャットで答えてください")
	if j := e.peers.Job(t, id); j.GetStatus() != approvalv1.JobStatus_JOB_STATUS_PENDING {
		t.Fatalf("cost job after the other conversation's /approve = %v", j)
	}
	// The conversation that asked can still go ahead.
	e.send(t, approver, "/approve "+id)
	if len(e.peers.Router.Requests()) != calls+1 {
		t.Fatal("the go-ahead in the conversation that asked made no call")
	}
}
