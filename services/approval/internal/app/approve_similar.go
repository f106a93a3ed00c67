package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Bounds of an "approve similar" grant's lifetime (also capped by approval.auto_approve.max_ttl).
const (
	SimilarDefaultTTL = 30 * time.Minute
	SimilarMaxTTL     = 24 * time.Hour
)

// SimilarResult is an approved job and the grant scoped from it.
type SimilarResult struct {
	Job   domain.Job
	Grant domain.Grant
}

// similarTTL bounds the requested lifetime: zero is the default, more than the maximum is an
// error.
func (s *Service) similarTTL(ttl time.Duration) (time.Duration, error) {
	limit := SimilarMaxTTL
	if s.cfg.MaxGrantTTL > 0 && s.cfg.MaxGrantTTL < limit {
		limit = s.cfg.MaxGrantTTL
	}
	switch {
	case ttl == 0:
		return min(SimilarDefaultTTL, limit), nil
	case ttl < time.Minute:
		return 0, domain.Fail(domain.ErrInvalid, domain.CodeSimilarTooShort, ttl)
	case ttl > limit:
		return 0, domain.Fail(domain.ErrInvalid, domain.CodeSimilarTooLong, ttl, limit)
	}
	return ttl, nil
}

// ApproveSimilar approves a pending job and makes an Auto-Approve grant scoped from it (its
// directories, task type, route and operation kinds, never a hard-require kind) for ttl. Only
// approvers may. It replaces an earlier "approve similar" grant but never a grant made with
// /auto-approve on (ErrConflict: switch that off first). The job is approved first; the grant is
// stored and audited after, so a grant never exists for a job that was not approved. from as
// for Approve.
func (s *Service) ApproveSimilar(ctx context.Context, id string, actor domain.Actor, ttl time.Duration, from string) (SimilarResult, error) {
	id, err := normalizeID(id)
	if err != nil {
		return SimilarResult{}, err
	}
	ctx, span := s.joinJob(ctx, id, "approval.approve_similar")
	defer span.End()
	if perr := s.approvers.Check(actor); perr != nil {
		s.auditRefusal(ctx, id, "approve_similar", actor, perr)
		return SimilarResult{}, perr
	}
	if !s.cfg.AutoApproveAllowed {
		return SimilarResult{}, domain.Fail(domain.ErrPermission, domain.CodeSimilarDisabled)
	}
	if ttl, err = s.similarTTL(ttl); err != nil {
		return SimilarResult{}, err
	}
	cur, err := s.store.Get(ctx, id)
	if err != nil {
		return SimilarResult{}, err
	}
	if cur.CostConfirmation {
		return SimilarResult{}, domain.Fail(domain.ErrInvalid, domain.CodeSimilarCost, id)
	}
	scope, err := domain.SimilarScopeOf(cur)
	if err != nil {
		return SimilarResult{}, err
	}
	old, err := s.grantInForce(ctx)
	if err != nil {
		return SimilarResult{}, err
	}
	if old.ActiveAt(s.clock()) && old.SimilarTo == "" {
		return SimilarResult{}, domain.Fail(domain.ErrConflict, domain.CodeSimilarGrantOn, old.ID, id)
	}
	job, err := s.store.Update(ctx, id, func(j domain.Job) ([]domain.Draft, error) {
		drafts, err := j.Approve(actor, s.clock())
		return domain.DecidedFrom(from, drafts), err
	})
	s.logDecision(ctx, "approve", actor, err)
	if err != nil {
		return SimilarResult{Job: job}, err
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	now := s.clock()
	g := domain.Grant{ID: "grant_" + hex.EncodeToString(b[:]), TaskTypes: scope.TaskTypes, Routes: scope.Routes,
		PathPrefixes: scope.PathPrefixes, OperationKinds: scope.OperationKinds, SimilarTo: id, CreatedBy: actor,
		Reason: "approve similar to " + id, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	if err := s.putGrant(ctx, g, ttl, domain.RuleApproveSimilar, actor); err != nil {
		return SimilarResult{Job: job}, domain.FailWith(nil, err, domain.CodeSimilarNotStored, id)
	}
	s.log.InfoContext(ctx, "approval.approve_similar", slog.String("grant_id", g.ID), slog.Duration("ttl", ttl),
		slog.String("actor", actor.Channel+":"+actor.ID), slog.Any("paths", g.PathPrefixes), slog.Any("kinds", g.OperationKinds))
	return SimilarResult{Job: job, Grant: g}, nil
}
