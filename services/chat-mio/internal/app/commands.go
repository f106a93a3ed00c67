package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	heartbeatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

func (a *App) command(ctx context.Context, t *turn, cmd domain.Command) {
	a.log.InfoContext(ctx, "command.received", slog.String("command", cmd.Name), slog.String("target_job_id", cmd.JobID))
	switch cmd.Kind {
	case domain.CmdApprove:
		a.approve(ctx, t, cmd.JobID)
	case domain.CmdDeny:
		a.deny(ctx, t, cmd.JobID, cmd.Reason)
	case domain.CmdPick:
		a.pick(ctx, t, cmd.JobID, cmd.Pick)
	case domain.CmdAutoApproveOn, domain.CmdAutoApproveOff, domain.CmdAutoApproveStatus:
		a.autoApprove(ctx, t, cmd)
	case domain.CmdStatus:
		a.status(ctx, t)
	case domain.CmdLocal, domain.CmdCloud:
		a.setLocal(ctx, t, cmd.Kind == domain.CmdLocal)
	case domain.CmdHelp:
		t.say(domain.T(t.loc, domain.MsgHelp))
	}
}

// forJob makes the rest of the message part of the job it decides: the approval and executor
// calls and the reply carry that job's id.
func forJob(ctx context.Context, t *turn, id string) context.Context {
	t.result.JobId = id
	return jobid.WithJobID(ctx, id)
}

func (a *App) approve(ctx context.Context, t *turn, id string) {
	ctx = forJob(ctx, t, id)
	actx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	res, err := a.peers.Approval.Approve(actx, &approvalv1.ApproveRequest{JobId: id, Actor: t.actor})
	cancel()
	if err != nil {
		// Granted earlier but never run (the answer was lost, or the executor was down): the
		// grant is recorded, so run it now; the executor's single-use claim keeps it to one run.
		if a.grantedButNotRun(ctx, id, err) {
			text, async := a.execute(ctx, t, id)
			t.say(text)
			t.result.AsyncPending = t.result.AsyncPending || async
			return
		}
		t.say(a.decisionError(ctx, t, "approval.approve", id, err))
		return
	}
	a.forgetPending(ctx, t, id)
	a.log.InfoContext(ctx, "approval.granted", slog.String("approver", t.actor.GetId()))
	status := res.GetJob().GetStatus()
	if status != approvalv1.JobStatus_JOB_STATUS_GRANTED && status != approvalv1.JobStatus_JOB_STATUS_AUTO_APPROVED {
		// Approval answered without a grant: never execute on anything but a recorded grant.
		t.say(domain.T(t.loc, domain.MsgJobConflict, id, statusName(status)))
		return
	}
	text, async := a.execute(ctx, t, id)
	t.say(domain.T(t.loc, domain.MsgApproved, id) + "\n" + text)
	t.result.AsyncPending = t.result.AsyncPending || async
}

func (a *App) deny(ctx context.Context, t *turn, id, reason string) {
	ctx = forJob(ctx, t, id)
	actx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	res, err := a.peers.Approval.Deny(actx, &approvalv1.DenyRequest{JobId: id, Actor: t.actor, Reason: reason})
	cancel()
	if err != nil {
		t.say(a.decisionError(ctx, t, "approval.deny", id, err))
		return
	}
	a.forgetPending(ctx, t, id)
	stored := res.GetJob().GetDenyReason()
	if stored == "" {
		stored = reason
	}
	a.log.InfoContext(ctx, "approval.denied", slog.String("approver", t.actor.GetId()), slog.String("reason", stored))
	if stored == "" {
		t.say(domain.T(t.loc, domain.MsgDenied, id))
		return
	}
	t.say(domain.T(t.loc, domain.MsgDeniedReason, id, stored))
}

// decisionError turns a failed approve/deny into a user message and logs the detail.
func (a *App) decisionError(ctx context.Context, t *turn, op, id string, err error) string {
	code := connect.CodeOf(err)
	a.log.WarnContext(ctx, op+".failed", slog.String("code", code.String()), slog.Any("error", err))
	switch code {
	case connect.CodePermissionDenied, connect.CodeUnauthenticated:
		return domain.T(t.loc, domain.MsgNotApprover, id)
	case connect.CodeNotFound:
		a.forgetPending(ctx, t, id)
		return domain.T(t.loc, domain.MsgJobNotFound, id)
	case connect.CodeFailedPrecondition, connect.CodeAlreadyExists, connect.CodeAborted:
		return domain.T(t.loc, domain.MsgJobConflict, id, a.jobStatus(ctx, id, err))
	case connect.CodeInvalidArgument:
		if op == "approval.deny" {
			return domain.T(t.loc, domain.MsgUsageDeny)
		}
		return domain.T(t.loc, domain.MsgUsageApprove)
	}
	cmd := "/approve"
	if op == "approval.deny" {
		cmd = "/deny"
	}
	return domain.T(t.loc, domain.MsgDecisionDown, id, cmd)
}

// jobStatus names the job's current state for a conflict message.
func (a *App) jobStatus(ctx context.Context, id string, cause error) string {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	defer cancel()
	res, err := a.peers.Approval.GetJob(ctx, &approvalv1.GetJobRequest{JobId: id})
	if err != nil {
		var ce *connect.Error
		if errors.As(cause, &ce) {
			return ce.Message()
		}
		return cause.Error()
	}
	return statusName(res.GetJob().GetStatus())
}

func statusName(s approvalv1.JobStatus) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "JOB_STATUS_"))
}

func (a *App) forgetPending(ctx context.Context, t *turn, id string) {
	if t.sess.Degraded {
		return
	}
	if err := a.store.RemovePending(ctx, t.sess.ID, id); err != nil {
		a.log.WarnContext(ctx, "session.pending_remove_failed", slog.String("target_job_id", id), slog.Any("error", err))
	}
}

func (a *App) autoApprove(ctx context.Context, t *turn, cmd domain.Command) {
	actx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	defer cancel()
	loc := string(t.loc)
	var text, fallback string
	var err error
	switch cmd.Kind {
	case domain.CmdAutoApproveOn:
		if t.sess.Degraded {
			t.say(domain.T(t.loc, domain.MsgAutoDegraded))
			return
		}
		req := &approvalv1.SetAutoApproveRequest{Actor: t.actor, PathPrefixes: cmd.Auto.Paths, AllowedOperations: cmd.Auto.Ops, Locale: loc}
		if cmd.Auto.TTL > 0 {
			req.Ttl = durationpb.New(cmd.Auto.TTL)
		}
		for _, tt := range cmd.Auto.TaskTypes {
			req.TaskTypes = append(req.TaskTypes, commonv1.TaskType(commonv1.TaskType_value["TASK_TYPE_"+strings.ToUpper(tt)]))
		}
		for _, r := range cmd.Auto.Routes {
			req.Routes = append(req.Routes, RouteEnum(r))
		}
		var res *approvalv1.SetAutoApproveResponse
		res, err = a.peers.Approval.SetAutoApprove(actx, req)
		text, fallback = res.GetStatusText(), domain.T(t.loc, domain.MsgAutoOn)
	case domain.CmdAutoApproveOff:
		var res *approvalv1.DisableAutoApproveResponse
		res, err = a.peers.Approval.DisableAutoApprove(actx, &approvalv1.DisableAutoApproveRequest{Actor: t.actor, Locale: loc})
		text, fallback = res.GetStatusText(), domain.T(t.loc, domain.MsgAutoOff)
	default:
		var res *approvalv1.GetAutoApproveResponse
		res, err = a.peers.Approval.GetAutoApprove(actx, &approvalv1.GetAutoApproveRequest{Locale: loc})
		text, fallback = res.GetStatusText(), domain.T(t.loc, domain.MsgAutoStatusOff)
		if res.GetGrant().GetActive() {
			fallback = domain.T(t.loc, domain.MsgAutoOn)
		}
	}
	if err != nil {
		code := connect.CodeOf(err)
		a.log.WarnContext(ctx, "approval.auto_approve.failed", slog.String("code", code.String()), slog.Any("error", err))
		switch code {
		case connect.CodePermissionDenied, connect.CodeUnauthenticated:
			t.say(domain.T(t.loc, domain.MsgNotApproverAuto))
		case connect.CodeInvalidArgument:
			t.say(domain.T(t.loc, domain.MsgUsageAuto) + "\n" + connectMessage(err))
		default:
			t.say(domain.T(t.loc, domain.MsgPeerFailed, "approval"))
		}
		return
	}
	a.log.InfoContext(ctx, "approval.auto_approve", slog.String("command", cmd.Name), slog.Int("kind", int(cmd.Kind)))
	if text == "" {
		text = fallback
	}
	t.say(text)
}

func connectMessage(err error) string {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce.Message()
	}
	return ""
}

func (a *App) status(ctx context.Context, t *turn) {
	hctx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	res, err := a.peers.Heartbeat.Report(hctx, &heartbeatv1.ReportRequest{Locale: string(t.loc)})
	cancel()
	var parts []string
	if err != nil {
		a.log.WarnContext(ctx, "heartbeat.report_failed", slog.Any("error", err))
		parts = append(parts, domain.T(t.loc, domain.MsgHeartbeatDown))
	} else {
		parts = append(parts, res.GetText())
	}
	local := domain.T(t.loc, domain.MsgNo)
	if t.sess.LocalOnly {
		local = domain.T(t.loc, domain.MsgYes)
	}
	pending := domain.T(t.loc, domain.MsgNone)
	if ids := a.stillPending(ctx, t); len(ids) > 0 {
		pending = strings.Join(ids, ", ")
	}
	parts = append(parts, domain.T(t.loc, domain.MsgStatusSession, t.sess.ID, local, pending))
	t.say(strings.Join(parts, "\n\n"))
}

// stillPending drops from the session the jobs approval no longer holds as pending (decided
// elsewhere, e.g. on the web console, or expired). Jobs whose state cannot be read stay listed.
func (a *App) stillPending(ctx context.Context, t *turn) []string {
	var out []string
	for _, id := range t.sess.Pending {
		actx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
		res, err := a.peers.Approval.GetJob(actx, &approvalv1.GetJobRequest{JobId: id})
		cancel()
		switch {
		case err == nil && res.GetJob().GetStatus() != approvalv1.JobStatus_JOB_STATUS_PENDING,
			connect.CodeOf(err) == connect.CodeNotFound:
			a.forgetPending(ctx, t, id)
		default:
			out = append(out, id)
		}
	}
	return out
}

func (a *App) setLocal(ctx context.Context, t *turn, on bool) {
	if err := a.store.SetLocalOnly(ctx, t.sess.ID, on); err != nil {
		a.log.WarnContext(ctx, "session.set_local_failed", slog.Any("error", err))
		t.say(domain.T(t.loc, domain.MsgSettingNotSaved))
		return
	}
	t.sess.LocalOnly = on
	a.log.InfoContext(ctx, "session.local_only", slog.Bool("local_only", on))
	if on {
		t.say(domain.T(t.loc, domain.MsgLocalOn))
		return
	}
	t.say(domain.T(t.loc, domain.MsgLocalOff))
}

// grantedButNotRun reports whether a refused /approve met a job that is already granted and not
// yet claimed.
func (a *App) grantedButNotRun(ctx context.Context, id string, err error) bool {
	switch connect.CodeOf(err) {
	case connect.CodeAborted, connect.CodeFailedPrecondition, connect.CodeAlreadyExists:
	default:
		return false
	}
	gctx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	defer cancel()
	res, gerr := a.peers.Approval.GetJob(gctx, &approvalv1.GetJobRequest{JobId: id})
	if gerr != nil {
		return false
	}
	switch res.GetJob().GetStatus() {
	case approvalv1.JobStatus_JOB_STATUS_GRANTED, approvalv1.JobStatus_JOB_STATUS_AUTO_APPROVED:
		a.log.InfoContext(ctx, "approval.resume_execution", slog.String("status", res.GetJob().GetStatus().String()))
		return true
	}
	return false
}
