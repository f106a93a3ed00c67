package app

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// ClaimJob hands an approved job to the executor once: one compare-and-set on the job's
// version. The store first verifies the job's event log (keyed chain, anchor, row) and hands the
// decision the job rebuilt from its events, so the approval claimed is the one the log records
// (ErrTampered otherwise). The stored patch is re-parsed and must still hash to the approved
// value, and an auto-approved job needs its grant to still be the active one.
func (s *Service) ClaimJob(ctx context.Context, id, executorID string) (domain.Job, error) {
	id, err := normalizeID(id)
	if err != nil {
		return domain.Job{}, err
	}
	ctx = jobid.WithJobID(ctx, id)
	// The grant in force is read before the job's transaction (it reads the audit log too). A
	// switch-off that lands in between sends the job back to pending first, which the claim
	// then sees.
	grant := s.activeGrant(ctx, s.clock())
	job, err := s.store.Update(ctx, id, func(j domain.Job) ([]domain.Draft, error) {
		now := s.clock()
		check := domain.ClaimCheck{ExecutorID: executorID, GrantActive: true}
		if p, perr := patch.Parse(j.Patch, s.parseOpts()); perr != nil {
			check.ParseError = perr
		} else {
			check.ActualHash = p.Hash
		}
		// A job a policy rule allowed has no grant to check; one a grant approved needs it.
		if j.Status == domain.StatusAutoApproved && j.GrantID != "" {
			check.GrantActive = grant.ActiveAt(now) && grant.ID == j.GrantID
		}
		return j.Claim(check, now)
	})
	switch {
	case errors.Is(err, domain.ErrHashMismatch):
		s.metrics.Result("hash_mismatch")
	case errors.Is(err, domain.ErrConflict):
		s.metrics.Result("claim_rejected")
	}
	if err != nil {
		s.log.WarnContext(ctx, "approval.claim_rejected", slog.String("executor_id", executorID), slog.String("error", err.Error()))
		return job, err
	}
	s.metrics.Result("claimed")
	s.log.InfoContext(ctx, "approval.claimed", slog.String("executor_id", executorID), slog.Bool("auto_approved", job.AutoApproved))
	return job, nil
}

// ReportExecution records the executor's progress, including a hash mismatch it detected.
func (s *Service) ReportExecution(ctx context.Context, id string, kind domain.ExecutionKind, executorID string, result json.RawMessage, detail string) (domain.Job, error) {
	id, err := normalizeID(id)
	if err != nil {
		return domain.Job{}, err
	}
	ctx = jobid.WithJobID(ctx, id)
	job, err := s.store.Update(ctx, id, func(j domain.Job) ([]domain.Draft, error) {
		return j.Report(kind, executorID, domain.ExecutionPayload{Result: result, Detail: detail}, s.clock())
	})
	if err != nil {
		return job, err
	}
	if kind == domain.ExecHashMismatch {
		s.metrics.Result("hash_mismatch")
	}
	s.log.InfoContext(ctx, "approval.execution_"+string(kind), slog.String("executor_id", executorID))
	return job, nil
}
