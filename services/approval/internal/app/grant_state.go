package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// grantInForce is the Auto-Approve grant in force. The audit log decides — the newest of
// auto_approve_enabled and auto_approve_disabled — and the grant store is its cache, corrected
// whenever it disagrees (a grant brought back by a crash or a restored snapshot is removed, a
// grant lost with the cache is put back). Either store unreachable: Auto-Approve counts as off.
func (s *Service) grantInForce(ctx context.Context) (*domain.Grant, error) {
	cached, err := s.grants.Get(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: Auto-Approve grant store: %v", domain.ErrUnavailable, err)
	}
	truth, err := s.auditedGrant(ctx)
	if err != nil {
		return nil, err
	}
	now := s.clock()
	if !truth.ActiveAt(now) {
		truth = nil
	}
	switch {
	case truth == nil && cached != nil:
		s.log.WarnContext(ctx, "approval.auto_approve_reconciled", slog.String("cached_grant", cached.ID), slog.String("audit", "off"))
		if _, err := s.grants.Delete(ctx); err != nil {
			s.log.WarnContext(ctx, "approval.auto_approve_unavailable", slog.String("error", err.Error()))
		}
	case truth != nil && (cached == nil || cached.ID != truth.ID):
		s.log.WarnContext(ctx, "approval.auto_approve_reconciled", slog.String("grant_id", truth.ID), slog.String("audit", "on"))
		if err := s.grants.Set(ctx, *truth, truth.ExpiresAt.Sub(now)); err != nil {
			s.log.WarnContext(ctx, "approval.auto_approve_unavailable", slog.String("error", err.Error()))
		}
	}
	return truth, nil
}

// auditedGrant is the grant the newest Auto-Approve event of the audit log names: the grant
// of an auto_approve_enabled (possibly expired by now), nil after auto_approve_disabled or
// when Auto-Approve was never switched on.
func (s *Service) auditedGrant(ctx context.Context) (*domain.Grant, error) {
	e, err := s.store.LastEvent(ctx, domain.StreamAutoApprove, domain.EventAutoApproveEnabled, domain.EventAutoApproveDisabled)
	if err != nil {
		return nil, fmt.Errorf("%w: Auto-Approve audit log: %v", domain.ErrUnavailable, err)
	}
	if e == nil || e.Type != domain.EventAutoApproveEnabled {
		return nil, nil
	}
	var g domain.Grant
	if err := json.Unmarshal(e.Payload, &g); err != nil || g.ID == "" {
		return nil, fmt.Errorf("Auto-Approve audit event %d: the grant does not decode: %v", e.Seq, err)
	}
	return &g, nil
}

// putGrant records a new grant: first in the audit log (the truth), then in the cache. When
// the cache cannot take it, the audit log gets the previous state back, so a failed change
// leaves Auto-Approve as it was.
func (s *Service) putGrant(ctx context.Context, g domain.Grant, ttl time.Duration, rule string, actor domain.Actor) error {
	if _, err := s.grants.Get(ctx); err != nil {
		// Nothing is recorded while the cache is unreachable: the change could not take effect.
		return fmt.Errorf("%w: Auto-Approve grant store: %v", domain.ErrUnavailable, err)
	}
	prev, err := s.auditedGrant(ctx)
	if err != nil {
		return err
	}
	d := domain.Draft{Type: domain.EventAutoApproveEnabled, Actor: actor, Channel: actor.Channel, At: g.CreatedAt, PolicyRule: rule, Payload: g}
	if err := s.store.Append(ctx, domain.StreamAutoApprove, []domain.Draft{d}); err != nil {
		return fmt.Errorf("audit Auto-Approve grant: %w", err)
	}
	serr := s.grants.Set(ctx, g, ttl)
	if serr == nil {
		return nil
	}
	back := domain.Draft{Type: domain.EventAutoApproveDisabled, Actor: domain.System, Channel: domain.System.Channel, At: s.clock(),
		PolicyRule: domain.RuleAutoApprove, Payload: map[string]string{"grant_id": g.ID, "reason": "the grant could not be stored; the previous state stands"}}
	if now := s.clock(); prev.ActiveAt(now) {
		back = domain.Draft{Type: domain.EventAutoApproveEnabled, Actor: domain.System, Channel: domain.System.Channel, At: now,
			PolicyRule: domain.RuleAutoApprove, Payload: *prev}
	}
	if err := s.store.Append(ctx, domain.StreamAutoApprove, []domain.Draft{back}); err != nil {
		s.log.ErrorContext(ctx, "approval.auto_approve_rollback_failed", slog.String("error", err.Error()))
	}
	return fmt.Errorf("%w: store Auto-Approve grant: %v", domain.ErrUnavailable, serr)
}
