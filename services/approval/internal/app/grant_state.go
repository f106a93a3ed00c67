package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
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
// when Auto-Approve was never switched on. The stream's keyed hash chain is verified whenever
// its newest event changes, so an edited or inserted event is refused (Auto-Approve then
// counts as off); a grant longer than the configured maximum is cut to it.
func (s *Service) auditedGrant(ctx context.Context) (*domain.Grant, error) {
	return s.auditedGrantIn(ctx, storeLog{ctx: ctx, s: s.store})
}

// auditedGrantIn is auditedGrant read from log: the store, or a job's transaction that must
// decide on the grant in force at its commit (UpdateReading).
func (s *Service) auditedGrantIn(ctx context.Context, log StreamReader) (*domain.Grant, error) {
	e, err := log.LastEvent(domain.EventAutoApproveEnabled, domain.EventAutoApproveDisabled)
	if err != nil {
		return nil, fmt.Errorf("%w: Auto-Approve audit log: %v", domain.ErrUnavailable, err)
	}
	if e == nil {
		return nil, nil
	}
	if err := s.verifiedUpTo(ctx, log, e); err != nil {
		return nil, err
	}
	if e.Type != domain.EventAutoApproveEnabled {
		return nil, nil
	}
	var g domain.Grant
	if err := json.Unmarshal(e.Payload, &g); err != nil || g.ID == "" {
		return nil, fmt.Errorf("Auto-Approve audit event %d: the grant does not decode: %v", e.Seq, err)
	}
	if max := s.cfg.MaxGrantTTL; max > 0 && g.ExpiresAt.After(g.CreatedAt.Add(max)) {
		g.ExpiresAt = g.CreatedAt.Add(max)
	}
	return &g, nil
}

// storeLog reads the Auto-Approve log from the store, outside any job's transaction.
type storeLog struct {
	ctx context.Context
	s   Store
}

func (l storeLog) LastEvent(types ...domain.EventType) (*domain.Event, error) {
	return l.s.LastEvent(l.ctx, domain.StreamAutoApprove, types...)
}

func (l storeLog) Events() ([]domain.Event, error) {
	return l.s.Events(l.ctx, domain.StreamAutoApprove)
}

// grantInForceIn reports whether the grant id is the Auto-Approve grant in force at now, as
// log says. Errors: the log could not be read (ErrUnavailable) — a log that does not verify
// counts as Auto-Approve off, not as an error.
func (s *Service) grantInForceIn(ctx context.Context, log StreamReader, id string, now time.Time) (bool, error) {
	g, err := s.auditedGrantIn(ctx, log)
	switch {
	case errors.Is(err, domain.ErrUnavailable):
		return false, err
	case err != nil:
		return false, nil
	}
	return g.ActiveAt(now) && g.ID == id, nil
}

// verifiedUpTo checks the keyed chain of the Auto-Approve stream once its newest decisive event
// is e, remembering what it verified.
func (s *Service) verifiedUpTo(ctx context.Context, log StreamReader, e *domain.Event) error {
	// The event as read — any edit of it since it verified changes this — names the check.
	sum := sha256.Sum256(append([]byte(fmt.Sprintf("%d|%s|%s|%s|", e.Seq, e.Type, e.Hash, e.PrevHash)), e.Payload...))
	key := hex.EncodeToString(sum[:])
	// The lock guards the remembered key only, never the read of the log: a caller inside a
	// transaction of the audit store (a claim, the sweeper) holds its one connection and may
	// verify too, so a caller holding the lock while it waited for that connection would wait
	// for the first, which would wait for the lock. Two callers may then check the chain at
	// once; the key of an older event never replaces a newer one's (grantVerifiedSeq).
	s.grantMu.Lock()
	done := s.grantVerified == key
	s.grantMu.Unlock()
	if done {
		return nil
	}
	if s.keys == nil {
		// Without the audit key (use cases tested alone) there is no chain to check.
		return nil
	}
	evs, err := log.Events()
	if err != nil {
		return fmt.Errorf("%w: Auto-Approve audit log: %v", domain.ErrUnavailable, err)
	}
	if err := s.keys.VerifyChain(evs); err != nil {
		s.log.ErrorContext(ctx, "approval.auto_approve_log_invalid", slog.String("error", err.Error()))
		return fmt.Errorf("%w: the Auto-Approve audit log does not verify: %v", domain.ErrTampered, err)
	}
	// The event that decides was read apart from the chain (outside a transaction, two reads):
	// it must be, byte for byte, the chain's event of its seq, or a row swapped in for the first
	// read and back for the second would pass as verified.
	if !inChain(evs, e) {
		s.log.ErrorContext(ctx, "approval.auto_approve_log_invalid", slog.Int64("seq", e.Seq),
			slog.String("error", "the deciding event is not the verified chain's"))
		return fmt.Errorf("%w: the Auto-Approve event %d is not the one its verified log holds", domain.ErrTampered, e.Seq)
	}
	s.grantMu.Lock()
	if e.Seq >= s.grantVerifiedSeq {
		s.grantVerified, s.grantVerifiedSeq = key, e.Seq
	}
	s.grantMu.Unlock()
	return nil
}

// inChain reports whether evs holds e as it is: same seq, type, hashes and payload.
func inChain(evs []domain.Event, e *domain.Event) bool {
	for i := range evs {
		if c := &evs[i]; c.Seq == e.Seq {
			return c.Type == e.Type && c.Hash == e.Hash && c.PrevHash == e.PrevHash && bytes.Equal(c.Payload, e.Payload)
		}
	}
	return false
}

// putGrant records a new grant: first in the audit log (the truth, and the commit), then in the
// cache. A cache that is unreachable before anything is recorded fails the change, which then
// leaves Auto-Approve as it was.
func (s *Service) putGrant(ctx context.Context, g domain.Grant, ttl time.Duration, rule string, actor domain.Actor) error {
	if _, err := s.grants.Get(ctx); err != nil {
		// Nothing is recorded while the cache is unreachable: the change could not take effect.
		return fmt.Errorf("%w: Auto-Approve grant store: %v", domain.ErrUnavailable, err)
	}
	// A log that does not verify is not written on top of.
	if _, err := s.auditedGrant(ctx); err != nil {
		return err
	}
	d := domain.Draft{Type: domain.EventAutoApproveEnabled, Actor: actor, Channel: actor.Channel, At: g.CreatedAt, PolicyRule: rule, Payload: g}
	if err := s.store.Append(ctx, domain.StreamAutoApprove, []domain.Draft{d}); err != nil {
		return fmt.Errorf("audit Auto-Approve grant: %w", err)
	}
	// The audit log is the commit: a cache that cannot take the grant now is corrected from it
	// on the next read (and reads fail closed while the cache is down).
	if err := s.grants.Set(ctx, g, ttl); err != nil {
		s.log.WarnContext(ctx, "approval.auto_approve_cache_stale", slog.String("grant_id", g.ID), slog.String("error", err.Error()))
	}
	return nil
}
