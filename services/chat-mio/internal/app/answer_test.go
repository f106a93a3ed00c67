package app_test

import (
	"strings"
	"testing"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
)

// A review (or design, or analysis) without a patch is the answer: the user gets its text and
// who wrote it, nothing is asked of approval and nothing runs.
func TestProposalWithoutPatchIsAnAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		locale string
		want   []string
	}{
		{"ja", "", []string{"order2 の回答（ジョブ ", "Update docs as asked (order2)"}},
		{"en", "en", []string{"Answer from order2 (job ", "no changes", "Update docs as asked (order2)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.peers.Router.SetPropose(func(string) (string, commonv1.TaskType) { return "", commonv1.TaskType_TASK_TYPE_REVIEW })
			res := e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: codeMsg, Locale: tc.locale})
			got := text(res)
			mustContain(t, got, append(tc.want, res.GetJobId())...)
			for _, bad := range []string{"承認サービスに接続できない", "approval service", "/approve"} {
				if strings.Contains(got, bad) {
					t.Fatalf("an answer was treated as an approval request: %s", got)
				}
			}
			if len(actions(res)) != 0 || e.peers.Executor.Calls() != 0 {
				t.Fatal("an answer offered buttons or ran")
			}
			// Approval recorded it as completed without execution.
			if j := e.peers.Job(t, res.GetJobId()); j.GetStatus() != approvalv1.JobStatus_JOB_STATUS_ANSWERED || !strings.Contains(j.GetPlan(), "Update docs as asked") {
				t.Fatalf("approval holds %v %q, want the answer recorded", j.GetStatus(), j.GetPlan())
			}
		})
	}
}
