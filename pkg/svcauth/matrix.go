package svcauth

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1/coderv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"
)

// Rule is one row of the authorization matrix: who may call a procedure and whether the call
// must carry a verified channel user (the approver or requester it acts for).
type Rule struct {
	Procedure string
	// Servers are the identities that serve the procedure.
	Servers []string
	Callers []string
	// Principal: the call acts for a person and must carry a verified principal assertion.
	Principal bool
}

// Matrix is the suite's authorization matrix, the one place that says which identity may call
// which procedure. A procedure that is not listed is refused to everyone. docs/security.md
// renders it (TestMatrixDocumented keeps the two in step).
func Matrix() []Rule {
	gateways := []string{GatewayLine, GatewaySlack, CLI}
	return []Rule{
		// chat-mio speaks for the user: it asks for approval of a proposal it presents and
		// forwards decisions and Auto-Approve changes made by verified approvers.
		{approvalv1connect.ApprovalServiceRequestApprovalProcedure, []string{Approval}, []string{ChatMio}, true},
		{approvalv1connect.ApprovalServiceApproveProcedure, []string{Approval}, []string{ChatMio}, true},
		{approvalv1connect.ApprovalServiceDenyProcedure, []string{Approval}, []string{ChatMio}, true},
		{approvalv1connect.ApprovalServiceCancelProcedure, []string{Approval}, []string{ChatMio}, true},
		{approvalv1connect.ApprovalServiceSetAutoApproveProcedure, []string{Approval}, []string{ChatMio}, true},
		{approvalv1connect.ApprovalServiceDisableAutoApproveProcedure, []string{Approval}, []string{ChatMio}, true},
		{approvalv1connect.ApprovalServiceGetAutoApproveProcedure, []string{Approval}, []string{ChatMio}, false},
		{approvalv1connect.ApprovalServiceGetJobProcedure, []string{Approval}, []string{ChatMio, Executor}, false},
		{approvalv1connect.ApprovalServiceListJobsProcedure, []string{Approval}, []string{ChatMio}, false},
		{approvalv1connect.ApprovalServiceListJobEventsProcedure, []string{Approval}, []string{ChatMio}, false},
		// Every image chat-mio sends to a model is recorded first (the image audit log).
		{approvalv1connect.ApprovalServiceRecordImageProcedure, []string{Approval}, []string{ChatMio}, false},
		// Whoever allocates JobIDs asks where the audit store's ids of the day end, so a counter
		// that lost its state never hands one out again.
		{approvalv1connect.ApprovalServiceHighestJobNumberProcedure, []string{Approval}, []string{ChatMio, GatewayLine, GatewaySlack}, false},
		// Only the executor claims approved content and reports what it did with it.
		{approvalv1connect.ApprovalServiceClaimJobProcedure, []string{Approval}, []string{Executor}, false},
		{approvalv1connect.ApprovalServiceReportExecutionProcedure, []string{Approval}, []string{Executor}, false},
		{approvalv1connect.ApprovalServiceRenewClaimProcedure, []string{Approval}, []string{Executor}, false},
		{approvalv1connect.ApprovalServiceListLapsedClaimsProcedure, []string{Approval}, []string{Executor}, false},
		// Inbound messages come from the channels, each vouching for its own user.
		{chatv1connect.ChatServiceHandleMessageProcedure, []string{ChatMio}, gateways, true},
		{routerv1connect.RouterServiceDecideProcedure, []string{RouterShiro}, []string{ChatMio}, false},
		{routerv1connect.RouterServiceProcessTaskProcedure, []string{RouterShiro}, []string{ChatMio}, false},
		{coderv1connect.CoderServiceProposeProcedure, []string{CoderOrder}, []string{RouterShiro}, false},
		{coderv1connect.CoderServiceProposeManyProcedure, []string{CoderOrder}, []string{RouterShiro}, false},
		// Execute takes only a job id: the executor claims the approved content from approval.
		{executorv1connect.ExecutorServiceExecuteProcedure, []string{Executor}, []string{ChatMio, CLI}, false},
		{executorv1connect.ExecutorServiceDryRunProcedure, []string{Executor}, []string{ChatMio, CLI}, false},
		// The read-only workspace view is for the coders and the worker, who look before they write.
		{executorv1connect.WorkspaceServiceListTreeProcedure, []string{Executor}, []string{CoderOrder, RouterShiro}, false},
		{executorv1connect.WorkspaceServiceReadFileProcedure, []string{Executor}, []string{CoderOrder, RouterShiro}, false},
		{executorv1connect.WorkspaceServiceSearchProcedure, []string{Executor}, []string{CoderOrder, RouterShiro}, false},
		{executorv1connect.WorkspaceServiceGitStatusProcedure, []string{Executor}, []string{CoderOrder, RouterShiro}, false},
		{executorv1connect.WorkspaceServiceGitLogProcedure, []string{Executor}, []string{CoderOrder, RouterShiro}, false},
		{executorv1connect.WorkspaceServiceDiffSummaryProcedure, []string{Executor}, []string{CoderOrder, RouterShiro}, false},
		{executorv1connect.WorkspaceServiceRemotesProcedure, []string{Executor}, []string{CoderOrder, RouterShiro}, false},
		// Only chat-mio (results), heartbeat (alerts) and approval (telling a requester how their
		// job was decided elsewhere, or that it expired) write into a chat.
		{gatewayv1connect.NotificationServicePushProcedure, []string{GatewayLine, GatewaySlack, CLI}, []string{ChatMio, Heartbeat, Approval}, false},
		{heartbeatv1connect.HeartbeatServiceBeatProcedure, []string{Heartbeat}, Services(), false},
		{heartbeatv1connect.HeartbeatServiceReportProcedure, []string{Heartbeat}, []string{ChatMio, CLI}, false},
		{heartbeatv1connect.HeartbeatServiceWatchProcedure, []string{Heartbeat}, []string{ChatMio, CLI}, false},
	}
}

// Policy is the matrix indexed by procedure.
type Policy map[string]Rule

// NewPolicy indexes the matrix.
func NewPolicy(rules []Rule) Policy {
	p := Policy{}
	for _, r := range rules {
		p[r.Procedure] = r
	}
	return p
}

// Allowed reports whether caller may call procedure.
func (p Policy) Allowed(caller, procedure string) (Rule, bool) {
	r, ok := p[procedure]
	return r, ok && slices.Contains(r.Callers, caller)
}

// MatrixMarkdown renders the matrix as the table in docs/security.md.
func MatrixMarkdown() string {
	rules := Matrix()
	sort.SliceStable(rules, func(i, j int) bool { return rules[i].Procedure < rules[j].Procedure })
	var b strings.Builder
	b.WriteString("| procedure | served by | allowed callers | acts for a verified user |\n|---|---|---|---|\n")
	for _, r := range rules {
		who := "—"
		if r.Principal {
			who = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.Procedure, strings.Join(r.Servers, ", "), strings.Join(r.Callers, ", "), who)
	}
	return b.String()
}
