package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Approve grants a pending job. Only allowlisted approvers may; a refusal is audited. from is the
// chat session the approver answered from ("" for the REST API and the console): a decision made
// anywhere but the requester's chat is told to that chat (domain.NoticeOf).
func (s *Service) Approve(ctx context.Context, id string, actor domain.Actor, from string) (domain.Job, error) {
	return s.decide(ctx, id, actor, "approve", func(j domain.Job) ([]domain.Draft, error) {
		if j.CostConfirmation && (from == "" || from != j.SessionID) {
			// The go-ahead is taken up by the chat that asked (it makes the coder call): a
			// grant from the REST API, the console or another conversation would be recorded
			// and never acted on (the request is not made, or answered, elsewhere).
			err := domain.Fail(domain.ErrInvalid, domain.CodeCostInChat, j.ID)
			return []domain.Draft{{Type: domain.EventDecisionRejected, Actor: actor, Channel: actor.Channel, At: s.clock(),
				PolicyRule: domain.RuleCostOverLimit, Payload: domain.RejectedPayload{Attempt: "approve", Status: j.Status, Reason: err.Error()}}}, err
		}
		drafts, err := j.Approve(actor, s.clock())
		return domain.DecidedFrom(from, drafts), err
	})
}

// Deny refuses a pending job with an optional reason; from as for Approve.
func (s *Service) Deny(ctx context.Context, id string, actor domain.Actor, reason, from string) (domain.Job, error) {
	return s.decide(ctx, id, actor, "deny", func(j domain.Job) ([]domain.Draft, error) {
		drafts, err := j.Deny(actor, reason, s.clock())
		return domain.DecidedFrom(from, drafts), err
	})
}

// Cancel withdraws a job that has not been claimed. Approvers and the requester may cancel.
func (s *Service) Cancel(ctx context.Context, id string, actor domain.Actor, reason string) (domain.Job, error) {
	id, err := normalizeID(id)
	if err != nil {
		return domain.Job{}, err
	}
	ctx, span := s.joinJob(ctx, id, "approval.cancel")
	defer span.End()
	job, err := s.store.Update(ctx, id, func(j domain.Job) ([]domain.Draft, error) {
		if perr := s.approvers.Check(actor); perr != nil && (actor.ID == "" || actor != j.RequestedBy) {
			return []domain.Draft{refusal("cancel", actor, perr, s.clock())}, perr
		}
		return j.Cancel(actor, reason, s.clock())
	})
	s.logDecision(ctx, "cancel", actor, err)
	return job, err
}

func (s *Service) decide(ctx context.Context, id string, actor domain.Actor, attempt string, fn func(domain.Job) ([]domain.Draft, error)) (domain.Job, error) {
	id, err := normalizeID(id)
	if err != nil {
		return domain.Job{}, err
	}
	ctx, span := s.joinJob(ctx, id, "approval."+attempt)
	defer span.End()
	if perr := s.approvers.Check(actor); perr != nil {
		s.auditRefusal(ctx, id, attempt, actor, perr)
		return domain.Job{}, perr
	}
	job, err := s.store.Update(ctx, id, fn)
	s.logDecision(ctx, attempt, actor, err)
	return job, err
}

func refusal(attempt string, actor domain.Actor, err error, now time.Time) domain.Draft {
	return domain.Draft{Type: domain.EventDecisionRejected, Actor: actor, Channel: actor.Channel, At: now,
		PolicyRule: domain.RuleApproverList, Payload: domain.RejectedPayload{Attempt: attempt, Reason: err.Error()}}
}

// auditRefusal records a refused approver on the job's trail, or on the access stream when
// the job does not exist.
func (s *Service) auditRefusal(ctx context.Context, id, attempt string, actor domain.Actor, perr error) {
	d := refusal(attempt, actor, perr, s.clock())
	_, err := s.store.Update(ctx, id, func(domain.Job) ([]domain.Draft, error) { return []domain.Draft{d}, nil })
	if errors.Is(err, domain.ErrNotFound) {
		d.Type = domain.EventAccessRefused
		d.Payload = domain.RejectedPayload{Attempt: attempt + " " + id, Reason: perr.Error()}
		err = s.store.Append(ctx, domain.StreamAccess, []domain.Draft{d})
	}
	if err != nil {
		s.log.ErrorContext(ctx, "approval.audit_failed", slog.String("error", err.Error()))
	}
	s.metrics.Result("refused_approver")
	s.log.WarnContext(ctx, "approval.refused_approver", slog.String("attempt", attempt),
		slog.String("actor", actor.Channel+":"+actor.ID))
}

func (s *Service) logDecision(ctx context.Context, attempt string, actor domain.Actor, err error) {
	switch {
	case err == nil:
		s.metrics.Result(map[string]string{"approve": "granted", "deny": "denied", "cancel": "cancelled"}[attempt])
	case errors.Is(err, domain.ErrExpired):
		s.metrics.Result("expired")
		s.kickNotices()
	case errors.Is(err, domain.ErrConflict):
		s.metrics.Result("rejected")
	}
	if err == nil {
		s.kickNotices()
	}
	if err != nil {
		s.log.InfoContext(ctx, "approval.decision_rejected", slog.String("attempt", attempt),
			slog.String("actor", actor.Channel+":"+actor.ID), slog.String("error", err.Error()))
		return
	}
	s.log.InfoContext(ctx, "approval."+attempt, slog.String("actor", actor.Channel+":"+actor.ID))
}

// RefuseAccess audits a request whose credentials name no approver (e.g. an unknown REST
// token, identified only by its fingerprint).
func (s *Service) RefuseAccess(ctx context.Context, attempt string, actor domain.Actor) {
	d := domain.Draft{Type: domain.EventAccessRefused, Actor: actor, Channel: actor.Channel, At: s.clock(),
		PolicyRule: domain.RuleApproverList, Payload: domain.RejectedPayload{Attempt: attempt, Reason: "unknown approver"}}
	if err := s.store.Append(ctx, domain.StreamAccess, []domain.Draft{d}); err != nil {
		s.log.ErrorContext(ctx, "approval.audit_failed", slog.String("error", err.Error()))
	}
	s.log.WarnContext(ctx, "approval.refused_approver", slog.String("attempt", attempt), slog.String("actor", actor.Channel+":"+actor.ID))
}
