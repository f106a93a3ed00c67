package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

func (a *App) command(ctx context.Context, t *turn, cmd domain.Command) {
	a.log.InfoContext(ctx, "command.received", slog.String("command", cmd.Name), slog.String("target_job_id", cmd.JobID))
	switch cmd.Kind {
	case domain.CmdApprove:
		if cmd.Similar {
			a.approveSimilar(ctx, t, cmd.JobID, cmd.SimilarTTL)
			break
		}
		a.approve(ctx, t, cmd.JobID)
	case domain.CmdDeny:
		a.deny(ctx, t, cmd.JobID, cmd.Reason)
	case domain.CmdPick:
		a.pick(ctx, t, cmd.JobID, cmd.Pick)
	case domain.CmdRetry:
		a.retry(ctx, t, cmd.JobID)
	case domain.CmdAutoApproveOn, domain.CmdAutoApproveOff, domain.CmdAutoApproveStatus:
		a.autoApprove(ctx, t, cmd)
	case domain.CmdStatus:
		a.status(ctx, t)
	case domain.CmdLocal, domain.CmdCloud:
		a.setLocal(ctx, t, cmd.Kind == domain.CmdLocal)
	case domain.CmdHelp:
		t.say(domain.T(t.loc, domain.MsgHelp))
	case domain.CmdForget:
		a.forget(ctx, t)
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
	job, err := a.peers.Approvals.Approve(actx, id, t.actor, t.loc)
	cancel()
	if err != nil {
		// Granted earlier but never run (the answer was lost, or the executor was down): the
		// grant is recorded, so run it now; the executor's single-use claim keeps it to one run.
		if a.grantedButNotRun(ctx, id, err) {
			t.result.ActionApplied = true
			text, async := a.execute(ctx, t, id)
			t.say(text)
			t.result.AsyncPending = t.result.AsyncPending || async
			return
		}
		t.say(a.decisionError(ctx, t, "approval.approve", id, err))
		return
	}
	a.forgetPending(ctx, t, id)
	t.result.ActionApplied = true
	a.log.InfoContext(ctx, "approval.granted", slog.String("approver", t.actor.ID))
	if job.CostConfirmation && job.Status == StatusGranted {
		// The go-ahead for a coder call over the limit: make the call, there is nothing to run.
		t.say(domain.T(t.loc, domain.MsgApproved, id))
		a.continueAfterCost(ctx, t, id, job)
		return
	}
	if !job.Status.Executable() || job.CostConfirmation {
		// Approval answered without a grant: never execute on anything but a recorded grant.
		t.say(domain.T(t.loc, domain.MsgJobConflict, id, domain.StateWord(t.loc, string(job.Status))))
		return
	}
	text, async := a.execute(ctx, t, id)
	t.say(domain.T(t.loc, domain.MsgApproved, id) + "\n" + text)
	t.result.AsyncPending = t.result.AsyncPending || async
}

// approveSimilar approves the job and has approval allow similar jobs for a while; the reply
// is approval's confirmation of the grant's scope, then the execution as for /approve.
func (a *App) approveSimilar(ctx context.Context, t *turn, id string, ttl time.Duration) {
	ctx = forJob(ctx, t, id)
	actx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	job, confirm, err := a.peers.Approvals.ApproveSimilar(actx, id, t.actor, ttl, t.loc)
	cancel()
	if err != nil {
		t.say(a.decisionError(ctx, t, "approval.approve_similar", id, err))
		return
	}
	a.forgetPending(ctx, t, id)
	t.result.ActionApplied = true
	a.log.InfoContext(ctx, "approval.granted_similar", slog.String("approver", t.actor.ID), slog.Duration("ttl", ttl))
	if !job.Status.Executable() {
		t.say(domain.T(t.loc, domain.MsgJobConflict, id, domain.StateWord(t.loc, string(job.Status))))
		return
	}
	text, async := a.execute(ctx, t, id)
	t.say(confirm + "\n" + text)
	t.result.AsyncPending = t.result.AsyncPending || async
}

func (a *App) deny(ctx context.Context, t *turn, id, reason string) {
	ctx = forJob(ctx, t, id)
	actx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	job, err := a.peers.Approvals.Deny(actx, id, t.actor, reason, t.loc)
	cancel()
	if err != nil {
		t.say(a.decisionError(ctx, t, "approval.deny", id, err))
		return
	}
	a.forgetPending(ctx, t, id)
	t.result.ActionApplied = true
	stored := job.DenyReason
	if stored == "" {
		stored = reason
	}
	a.log.InfoContext(ctx, "approval.denied", slog.String("approver", t.actor.ID), slog.String("reason", stored))
	if stored == "" {
		t.say(domain.T(t.loc, domain.MsgDenied, id))
		return
	}
	t.say(domain.T(t.loc, domain.MsgDeniedReason, id, stored))
}

// decisionError turns a failed approve/deny into a user message and logs the detail.
func (a *App) decisionError(ctx context.Context, t *turn, op, id string, err error) string {
	a.log.WarnContext(ctx, op+".failed", slog.String("kind", errKind(err)), slog.Any("error", err))
	cmd, usage := "/approve", domain.MsgUsageApprove
	if op == "approval.deny" {
		cmd, usage = "/deny", domain.MsgUsageDeny
	}
	switch {
	case errors.Is(err, domain.ErrUnavailable):
		return domain.T(t.loc, domain.MsgDecisionDown, id, cmd)
	case errors.Is(err, domain.ErrForbidden) && notApprover(err):
		return domain.T(t.loc, domain.MsgNotApprover, id)
	case errors.Is(err, domain.ErrForbidden):
		return domain.T(t.loc, domain.MsgDecisionRefused, id, domain.ClipTurn(domain.PeerText(t.loc, err), 200))
	case errors.Is(err, domain.ErrNotFound):
		a.forgetPending(ctx, t, id)
		return domain.T(t.loc, domain.MsgJobNotFound, id)
	case errors.Is(err, domain.ErrConflict):
		return a.conflictText(ctx, t, id, err)
	case errors.Is(err, domain.ErrInvalid):
		return withDetail(domain.T(t.loc, usage), domain.PeerMessage(err))
	}
	return domain.T(t.loc, domain.MsgDecisionFailed, id, cmd)
}

// notApprover reports whether approval refused because the person is not an approver (or
// could not be named), not for another reason of the same kind (Auto-Approve disabled).
func notApprover(err error) bool {
	switch domain.PeerReason(err) {
	case "", "NOT_AN_APPROVER", "NO_APPROVER_IDENTITY", "BOT_CANNOT_APPROVE":
		return true
	}
	return false
}

// withDetail appends a peer's explanation on a line of its own, when there is one.
func withDetail(text, detail string) string {
	if detail = strings.TrimSpace(detail); detail != "" {
		return text + "\n" + domain.ClipTurn(detail, 200)
	}
	return text
}

// errKind names the domain kind of a peer error, for logs.
func errKind(err error) string {
	for _, k := range []error{domain.ErrUnavailable, domain.ErrNotFound, domain.ErrConflict, domain.ErrForbidden, domain.ErrInvalid} {
		if errors.Is(err, k) {
			return k.Error()
		}
	}
	return "unexpected"
}

// conflictText tells why a decision about job id was refused as a conflict: the job's state now
// (and who decided it) when it was decided or expired, else approval's own words.
func (a *App) conflictText(ctx context.Context, t *turn, id string, cause error) string {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	defer cancel()
	job, err := a.peers.Approvals.Job(ctx, id)
	if err != nil || job.Status == StatusPending {
		return domain.T(t.loc, domain.MsgDecisionRefused, id, domain.ClipTurn(domain.PeerText(t.loc, cause), 200))
	}
	state := domain.StateWord(t.loc, string(job.Status))
	if job.DecidedBy != "" {
		state += ", " + job.DecidedBy
	}
	return domain.T(t.loc, domain.MsgJobConflict, id, state)
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
	var text, fallback string
	var err error
	switch cmd.Kind {
	case domain.CmdAutoApproveOn:
		if t.sess.Degraded {
			t.say(domain.T(t.loc, domain.MsgAutoDegraded))
			return
		}
		text, err = a.peers.Approvals.SetAutoApprove(actx, AutoApproveInput{By: t.actor, TTL: cmd.Auto.TTL, Paths: cmd.Auto.Paths,
			Ops: cmd.Auto.Ops, TaskTypes: cmd.Auto.TaskTypes, Routes: cmd.Auto.Routes, Locale: t.loc})
		fallback = domain.T(t.loc, domain.MsgAutoOn)
	case domain.CmdAutoApproveOff:
		text, err = a.peers.Approvals.DisableAutoApprove(actx, t.actor, t.loc)
		fallback = domain.T(t.loc, domain.MsgAutoOff)
	default:
		var st AutoApproveStatus
		st, err = a.peers.Approvals.AutoApproveStatus(actx, t.loc)
		text, fallback = st.Text, domain.T(t.loc, domain.MsgAutoStatusOff)
		if st.Active {
			fallback = domain.T(t.loc, domain.MsgAutoOn)
		}
	}
	if err != nil {
		a.log.WarnContext(ctx, "approval.auto_approve.failed", slog.String("kind", errKind(err)), slog.Any("error", err))
		switch {
		case errors.Is(err, domain.ErrUnavailable):
			t.say(domain.T(t.loc, domain.MsgAutoDown))
		case errors.Is(err, domain.ErrForbidden) && notApprover(err):
			t.say(domain.T(t.loc, domain.MsgNotApproverAuto))
		case errors.Is(err, domain.ErrInvalid):
			t.say(withDetail(domain.T(t.loc, domain.MsgUsageAuto), domain.PeerMessage(err)))
		case errors.Is(err, domain.ErrForbidden), errors.Is(err, domain.ErrConflict), errors.Is(err, domain.ErrNotFound):
			t.say(domain.T(t.loc, domain.MsgAutoRefused, domain.ClipTurn(domain.PeerText(t.loc, err), 200)))
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

func (a *App) status(ctx context.Context, t *turn) {
	hctx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	report, err := a.peers.Heartbeat.Report(hctx, t.loc)
	cancel()
	var parts []string
	if err != nil {
		a.log.WarnContext(ctx, "heartbeat.report_failed", slog.Any("error", err))
		parts = append(parts, domain.T(t.loc, domain.MsgHeartbeatDown))
	} else {
		parts = append(parts, report)
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
		job, err := a.peers.Approvals.Job(actx, id)
		cancel()
		switch {
		case err == nil && job.Status != StatusPending, errors.Is(err, domain.ErrNotFound):
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
	if !errors.Is(err, domain.ErrConflict) {
		return false
	}
	gctx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	defer cancel()
	job, gerr := a.peers.Approvals.Job(gctx, id)
	if gerr != nil || !job.Status.Executable() || job.CostConfirmation {
		return false
	}
	a.log.InfoContext(ctx, "approval.resume_execution", slog.String("status", string(job.Status)))
	return true
}
