package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// RequestInput is a proposal handed to approval.
type RequestInput struct {
	JobID       string
	Plan        string
	Patch       string
	Risk        domain.Risk
	Cost        domain.CostHint
	UsesBrowser bool
	TaskType    string
	Order       string
	Route       string
	SessionID   string
	Channel     string
	RequestedBy domain.Actor
	Summary     string
	Locale      string
	// AnswerOnly records an answer without a patch as completed without execution.
	AnswerOnly bool
	// CostConfirmation asks whether to continue a coder call estimated (Cost) above the limits.
	CostConfirmation bool
}

// RequestResult is the policy's answer and the text for the chat channel.
type RequestResult struct {
	Job      domain.Job
	Decision domain.Decision
	Text     string
	// Card is the request as a card, while the job waits for a person.
	Card *domain.Card
}

// RequestApproval parses the patch itself, evaluates policy and records the job.
func (s *Service) RequestApproval(ctx context.Context, in RequestInput) (RequestResult, error) {
	id, err := normalizeID(in.JobID)
	if err != nil {
		return RequestResult{}, err
	}
	ctx = jobid.WithJobID(ctx, id)
	if in.AnswerOnly {
		return s.recordAnswer(ctx, id, in)
	}
	if in.CostConfirmation {
		return s.requestCostConfirmation(ctx, id, in)
	}
	p, err := patch.Parse(in.Patch, s.parseOpts())
	if err != nil {
		return RequestResult{}, domain.FailWith(domain.ErrInvalid, err, domain.CodePatchInvalid)
	}
	if len(p.Operations) == 0 {
		return RequestResult{}, domain.Fail(domain.ErrInvalid, domain.CodePatchEmpty)
	}
	if in.Locale == "" {
		in.Locale = s.cfg.DefaultLocale
	}
	now := s.clock()
	pin := domain.PolicyInput{Patch: p, TaskType: in.TaskType, Route: in.Route, Cost: in.Cost, ProposalUsesBrowser: in.UsesBrowser,
		Requester: in.RequestedBy.ID}
	dec := s.evaluate(pin, s.activeGrant(ctx, now), now)

	ops := make([]patch.Operation, len(p.Operations))
	for i, op := range p.Operations {
		op.Content = "" // the patch text carries the content; the digest stays
		ops[i] = op
	}
	flags := make([]string, len(p.Flags))
	for i, f := range p.Flags {
		flags[i] = string(f)
	}
	req := domain.Job{
		SessionID: in.SessionID, Channel: in.Channel, Route: in.Route, TaskType: in.TaskType, Order: in.Order,
		Locale: in.Locale, Summary: in.Summary, Plan: in.Plan, Patch: in.Patch, ContentHash: p.Hash,
		Risk: in.Risk, Cost: in.Cost, UsesBrowser: p.HasFlag(patch.FlagBrowser) || in.UsesBrowser,
		ProposalUsesBrowser: in.UsesBrowser, Operations: ops, AffectedPaths: p.AffectedPaths, Flags: flags,
		Stats: p.Stats, Unknown: p.Unknown, PolicyReason: dec.Reason, PolicyReasonCode: dec.ReasonCode, PolicyReasonArgs: dec.ReasonArgs, PolicyHash: dec.PolicyHash, ExpiresAt: now.Add(s.cfg.PendingTTL),
		TraceParent: telemetry.TraceParent(ctx), ComputedRisk: domain.ComputedRisk(p, dec.Hits), RiskRules: domain.RulesOf(dec.Hits),
	}
	drafts := []domain.Draft{{Type: domain.EventRequested, Actor: in.RequestedBy, Channel: in.Channel, At: now,
		PolicyRule: dec.Rule, Payload: req}}
	switch dec.Outcome {
	case domain.OutcomeAutoApproved:
		drafts = append(drafts, domain.Draft{Type: domain.EventAutoApproved, Actor: domain.System, Channel: domain.System.Channel,
			At: now, PolicyRule: dec.Rule, Payload: domain.AutoApprovedPayload{GrantID: dec.GrantID, Reason: dec.Reason, ReasonCode: dec.ReasonCode, ReasonArgs: dec.ReasonArgs,
				PolicyHash: dec.PolicyHash}})
	case domain.OutcomeRefused:
		drafts = append(drafts, domain.Draft{Type: domain.EventRefused, Actor: domain.System, Channel: domain.System.Channel,
			At: now, PolicyRule: dec.Rule, Payload: domain.ReasonPayload{Reason: dec.Reason, ReasonCode: dec.ReasonCode, ReasonArgs: dec.ReasonArgs, PolicyHash: dec.PolicyHash}})
	}
	job, err := s.store.Create(ctx, id, drafts)
	if errors.Is(err, domain.ErrConflict) {
		// A retried request for the same content answers with the job already recorded.
		existing, gerr := s.store.Get(ctx, id)
		if gerr == nil && existing.ContentHash == p.Hash {
			outcome, ok := outcomeOf(existing)
			if !ok {
				return RequestResult{}, domain.Fail(domain.ErrConflict, domain.CodeJobExists, id, domain.State(existing.Status))
			}
			return RequestResult{Job: existing, Decision: domain.Decision{Outcome: outcome, Rule: existing.PolicyRule, Reason: existing.PolicyReason,
				ReasonCode: existing.PolicyReasonCode, ReasonArgs: existing.PolicyReasonArgs, PolicyHash: existing.PolicyHash},
				Text: s.text(existing, p, nil), Card: s.card(existing, p, nil)}, nil
		}
		return RequestResult{}, domain.Fail(domain.ErrConflict, domain.CodeJobIDTaken, id)
	}
	if err != nil {
		return RequestResult{}, fmt.Errorf("request %s: %w", id, err)
	}
	s.metrics.Request(dec.Outcome)
	s.log.InfoContext(ctx, "approval.requested", slog.String("outcome", string(dec.Outcome)),
		slog.String("policy_rule", dec.Rule), slog.String("policy_hash", dec.PolicyHash), slog.String("content_hash", p.Hash))
	return RequestResult{Job: job, Decision: dec, Text: s.text(job, p, dec.Hits), Card: s.card(job, p, dec.Hits)}, nil
}

// recordAnswer records a proposal that is an answer (design, review, analysis without a
// patch) as completed without execution: requested, then answered, in one step. Nothing is
// asked of anyone and nothing can run it. A retried record of the same answer is accepted.
func (s *Service) recordAnswer(ctx context.Context, id string, in RequestInput) (RequestResult, error) {
	if strings.TrimSpace(in.Patch) != "" {
		return RequestResult{}, domain.Fail(domain.ErrInvalid, domain.CodeAnswerHasPatch)
	}
	if in.Locale == "" {
		in.Locale = s.cfg.DefaultLocale
	}
	now := s.clock()
	hash := patch.Hash(nil)
	req := domain.Job{SessionID: in.SessionID, Channel: in.Channel, Route: in.Route, TaskType: in.TaskType, Order: in.Order,
		Locale: in.Locale, Summary: in.Summary, Plan: in.Plan, ContentHash: hash, Risk: in.Risk, Cost: in.Cost, ExpiresAt: now,
		TraceParent: telemetry.TraceParent(ctx)}
	drafts := []domain.Draft{
		{Type: domain.EventRequested, Actor: in.RequestedBy, Channel: in.Channel, At: now, Payload: req},
		{Type: domain.EventAnswered, Actor: domain.System, Channel: domain.System.Channel, At: now},
	}
	job, err := s.store.Create(ctx, id, drafts)
	if errors.Is(err, domain.ErrConflict) {
		existing, gerr := s.store.Get(ctx, id)
		if gerr == nil && existing.Status == domain.StatusAnswered && existing.Plan == in.Plan {
			return RequestResult{Job: existing, Decision: domain.Decision{Outcome: domain.OutcomeAnswered}}, nil
		}
		return RequestResult{}, domain.Fail(domain.ErrConflict, domain.CodeJobIDTaken, id)
	}
	if err != nil {
		return RequestResult{}, fmt.Errorf("record answer %s: %w", id, err)
	}
	s.metrics.Request(domain.OutcomeAnswered)
	s.log.InfoContext(ctx, "approval.answer_recorded", slog.String("order", in.Order), slog.String("task_type", in.TaskType))
	return RequestResult{Job: job, Decision: domain.Decision{Outcome: domain.OutcomeAnswered}}, nil
}

// outcomeOf is the answer a retried request gets; a job that was decided against, expired or
// already ran has no answer that could lead to running it.
func outcomeOf(j domain.Job) (domain.Outcome, bool) {
	switch j.Status {
	case domain.StatusPending:
		return domain.OutcomePending, true
	case domain.StatusRefused:
		return domain.OutcomeRefused, true
	case domain.StatusAutoApproved, domain.StatusGranted:
		return domain.OutcomeAutoApproved, true
	}
	return "", false
}

func (s *Service) text(j domain.Job, p *patch.Patch, hits []domain.Hit) string {
	en := strings.HasPrefix(strings.ToLower(j.Locale), "en")
	switch j.Status {
	case domain.StatusAutoApproved:
		if en {
			return fmt.Sprintf("✅ %s was approved by Auto-Approve (%s).", j.ID, j.PolicyRule)
		}
		return fmt.Sprintf("✅ %s は Auto-Approve により承認されました（%s）。", j.ID, j.PolicyRule)
	case domain.StatusRefused:
		return domain.RefusedText(j)
	}
	text := domain.RequestText(j, p, hits, s.cfg.Location)
	if link := domain.ConsoleLink(s.cfg.ConsoleURL, j.ID); link != "" {
		text += "\n" + link
	}
	return text
}

// card is the request of a pending job as a card (nil for any other state).
func (s *Service) card(j domain.Job, p *patch.Patch, hits []domain.Hit) *domain.Card {
	if j.Status != domain.StatusPending {
		return nil
	}
	c := domain.RequestCard(j, p, hits, s.cfg.Location, domain.ConsoleLink(s.cfg.ConsoleURL, j.ID))
	return &c
}

// CheckPolicy evaluates a proposal against the policy and the active grant without recording
// anything (what RequestApproval would decide now).
func (s *Service) CheckPolicy(ctx context.Context, in RequestInput) (domain.Decision, error) {
	p, err := patch.Parse(in.Patch, s.parseOpts())
	if err != nil {
		return domain.Decision{}, domain.FailWith(domain.ErrInvalid, err, domain.CodePatchInvalid)
	}
	now := s.clock()
	return s.evaluate(domain.PolicyInput{Patch: p, TaskType: in.TaskType, Route: in.Route, Cost: in.Cost,
		ProposalUsesBrowser: in.UsesBrowser, Requester: in.RequestedBy.ID}, s.activeGrant(ctx, now), now), nil
}
