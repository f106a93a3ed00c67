package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// requestCostConfirmation records a job that asks a person whether to continue a coder call
// estimated above the cost or token limit (SPEC §6 cost_over_limit). It always waits for a
// person: no grant covers it, and it can never be claimed. Its content hash binds the order,
// the estimate and the task summary, so the go-ahead is for exactly what was shown.
func (s *Service) requestCostConfirmation(ctx context.Context, id string, in RequestInput) (RequestResult, error) {
	switch {
	case strings.TrimSpace(in.Patch) != "":
		return RequestResult{}, domain.Fail(domain.ErrInvalid, domain.CodeCostHasPatch)
	case in.Cost.EstimatedCostUSD <= 0 && in.Cost.EstimatedTokens <= 0:
		return RequestResult{}, domain.Fail(domain.ErrInvalid, domain.CodeCostNoEstimate)
	case in.Cost.EstimatedCostUSD < 0 || in.Cost.EstimatedTokens < 0:
		return RequestResult{}, domain.Fail(domain.ErrInvalid, domain.CodeCostNegative)
	}
	if in.Locale == "" {
		in.Locale = s.cfg.DefaultLocale
	}
	now := s.clock()
	sum := sha256.Sum256(fmt.Appendf(nil, "cost_confirmation\x00%s\x00%d\x00%.6f\x00%s", in.Order, in.Cost.EstimatedTokens, in.Cost.EstimatedCostUSD, in.Summary))
	hash := "sha256:" + hex.EncodeToString(sum[:])
	dec := domain.PendingFor([]domain.Hit{domain.CostHit(s.cfg.Policy, in.Cost)})
	dec.Hits = nil
	req := domain.Job{SessionID: in.SessionID, Channel: in.Channel, Route: in.Route, TaskType: in.TaskType, Order: in.Order,
		Locale: in.Locale, Summary: in.Summary, Plan: in.Plan, ContentHash: hash, Risk: in.Risk, Cost: in.Cost,
		PolicyReason: dec.Reason, PolicyReasonCode: dec.ReasonCode, PolicyReasonArgs: dec.ReasonArgs, ExpiresAt: now.Add(s.cfg.PendingTTL), TraceParent: telemetry.TraceParent(ctx), CostConfirmation: true,
		ComputedRisk: "medium", RiskRules: []string{domain.RuleCostOverLimit}}
	drafts := []domain.Draft{{Type: domain.EventRequested, Actor: in.RequestedBy, Channel: in.Channel, At: now,
		PolicyRule: domain.RuleCostOverLimit, Payload: req}}
	job, err := s.store.Create(ctx, id, drafts)
	if errors.Is(err, domain.ErrConflict) {
		existing, gerr := s.store.Get(ctx, id)
		if gerr == nil && existing.CostConfirmation && existing.ContentHash == hash && existing.Status == domain.StatusPending {
			return RequestResult{Job: existing, Decision: dec,
				Text: s.costText(existing)}, nil
		}
		return RequestResult{}, domain.Fail(domain.ErrConflict, domain.CodeJobIDTaken, id)
	}
	if err != nil {
		return RequestResult{}, fmt.Errorf("request %s: %w", id, err)
	}
	s.metrics.Request(domain.OutcomePending)
	s.log.InfoContext(ctx, "approval.cost_confirmation_requested", slog.String("order", in.Order),
		slog.Int64("estimated_tokens", in.Cost.EstimatedTokens), slog.Float64("estimated_cost_usd", in.Cost.EstimatedCostUSD))
	return RequestResult{Job: job, Decision: dec,
		Text: s.costText(job)}, nil
}

// costText is the question of a cost confirmation: continue at about $X?
func (s *Service) costText(j domain.Job) string {
	text := domain.CostQuestion(j, s.cfg.Policy)
	if link := domain.ConsoleLink(s.cfg.ConsoleURL, j.ID); link != "" {
		text += "\n" + link
	}
	return text
}
