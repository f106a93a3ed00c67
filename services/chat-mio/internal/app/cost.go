package app

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// Cost confirmation (SPEC §6 cost_over_limit): when coder-order refuses a call because its
// estimate is over the cost or token limit, the job becomes a question to a person — continue
// at about $X? — recorded by approval like any job (requested, then granted or denied, in the
// audit log). Approving it makes the call under a new job with the approved estimate; denying
// it ends the job.

// askCost turns a cost_over_limit refusal into a cost confirmation job.
func (a *App) askCost(ctx context.Context, t *turn, o ProposalOption, route string) {
	id := t.result.GetJobId()
	actx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	res, err := a.peers.Approvals.Request(actx, ProposalInput{JobID: id, SessionID: t.sess.ID, Channel: t.actor.Channel,
		By: t.actor, Route: route, Locale: t.loc, Proposal: Proposal{Order: o.Order}, Cost: o.Estimate,
		Task: domain.ClipTurn(t.task, 300)})
	cancel()
	if err != nil {
		a.requestFailed(ctx, t, id, err)
		return
	}
	a.log.InfoContext(ctx, "chat.cost_confirmation_asked", slog.String("order", o.Order),
		slog.Int64("estimated_tokens", o.Estimate.Tokens), slog.Float64("estimated_cost_usd", o.Estimate.CostUSD))
	if res.Outcome != OutcomePending {
		a.log.ErrorContext(ctx, "approval.unexpected_outcome", slog.String("outcome", string(res.Outcome)))
		t.say(domain.T(t.loc, domain.MsgPeerFailed, "approval"))
		return
	}
	if !t.sess.Degraded {
		if err := a.store.AddPending(ctx, t.sess.ID, id); err != nil {
			a.log.WarnContext(ctx, "session.pending_add_failed", slog.Any("error", err))
		}
	}
	t.say(res.Text,
		&commonv1.Action{Kind: commonv1.ActionKind_ACTION_KIND_APPROVE, JobId: id, Label: domain.T(t.loc, domain.MsgButtonContinue)},
		&commonv1.Action{Kind: commonv1.ActionKind_ACTION_KIND_DENY, JobId: id, Label: domain.T(t.loc, domain.MsgButtonStop)})
}

// continueAfterCost makes the call a person approved at about job.Cost: the request kept for
// /retry is asked again of the same order, under a new job in a trace linked to this one.
func (a *App) continueAfterCost(ctx context.Context, t *turn, id string, job ApprovalJob) {
	rec, err := a.loadRetry(ctx, id)
	if err != nil {
		a.log.WarnContext(ctx, "chat.cost_request_unknown", slog.Any("error", err))
		t.say(domain.T(t.loc, domain.MsgCostRequestGone, id))
		return
	}
	if rec.SessionID != t.sess.ID {
		// Another conversation's request is not made, shown or answered here (as for /retry).
		a.log.WarnContext(ctx, "chat.cost_other_conversation", slog.String("cost_job", id))
		t.say(domain.T(t.loc, domain.MsgCostOtherChat, id))
		return
	}
	ctx, span, ok := a.followUp(ctx, t, "chat.cost_continue", attribute.String("confirmed_by_job", id),
		attribute.Float64("confirmed_cost_usd", job.Cost.CostUSD))
	if !ok {
		return
	}
	defer span.End()
	next := t.jobID
	who := rec.Order
	if who == "" {
		who = rec.Route
	}
	a.log.InfoContext(ctx, "chat.cost_continue", slog.String("confirmed_by_job", id), slog.String("order", rec.Order),
		slog.Float64("confirmed_cost_usd", job.Cost.CostUSD), slog.Int64("confirmed_tokens", job.Cost.Tokens))
	t.say(domain.T(t.loc, domain.MsgCostContinuing, id, who, job.Cost.CostUSD, next))
	cost := job.Cost
	t.confirmed = &cost
	a.converse(ctx, t, domain.RetryText(rec.Text, rec.Order, rec.Route))
}
