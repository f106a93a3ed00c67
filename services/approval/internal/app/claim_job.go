package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// ClaimJob hands an approved job to one executor (replica): one compare-and-set on the job's
// version, which makes the claim a lease the holder renews (RenewClaim) and whose fencing token
// its reports carry. A job whose lease lapsed is taken over. The store first verifies the job's
// event log (keyed chain, anchor, row) and hands the decision the job rebuilt from its events,
// so the approval claimed is the one the log records (ErrTampered otherwise). The stored patch is
// re-parsed and must still hash to the approved value, and an auto-approved job needs its grant
// to be the one in force — read from the audit log inside the claim's transaction, so a
// switch-off either committed before it (and the claim is refused) or after the claim.
func (s *Service) ClaimJob(ctx context.Context, id, executorID string) (domain.Job, error) {
	id, err := normalizeID(id)
	if err != nil {
		return domain.Job{}, err
	}
	if executorID == "" {
		return domain.Job{}, fmt.Errorf("%w: executor_id is required: the claim's holder", domain.ErrInvalid)
	}
	ctx = jobid.WithJobID(ctx, id)
	// The grant cache must answer: Auto-Approve fails closed while it cannot.
	_, cacheErr := s.grants.Get(ctx)
	takeover := false
	job, err := s.store.UpdateReading(ctx, id, domain.StreamAutoApprove, func(j domain.Job, log StreamReader) ([]domain.Draft, error) {
		now := s.clock()
		takeover = j.Status == domain.StatusExecuting
		check := domain.ClaimCheck{ExecutorID: executorID, GrantActive: true, LeaseTTL: s.cfg.ClaimLease}
		if p, perr := patch.Parse(j.Patch, s.parseOpts()); perr != nil {
			check.ParseError = perr
		} else {
			check.ActualHash = p.Hash
		}
		// A job a policy rule allowed has no grant to check; one a grant approved needs it.
		// So does taking over an auto-approved execution whose executor stopped.
		if takeover && j.AutoApproved && j.GrantID != "" && cacheErr != nil && j.LeaseLapsed(now) {
			// Whether the grant is still in force cannot be told now: the takeover waits and is
			// tried again, rather than failing the job over an outage of the grant store.
			return nil, fmt.Errorf("claim %s: %w: the Auto-Approve grant cannot be read: %v", j.ID, domain.ErrUnavailable, cacheErr)
		}
		if (j.Status == domain.StatusAutoApproved || (takeover && j.AutoApproved)) && j.GrantID != "" {
			active, gerr := s.grantInForceIn(ctx, log, j.GrantID, now)
			if gerr != nil {
				return nil, gerr
			}
			check.GrantActive = active && cacheErr == nil
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
	attrs := []any{slog.String("executor_id", executorID), slog.Bool("auto_approved", job.AutoApproved),
		slog.Int64("lease_token", job.ClaimToken), slog.Time("lease_expires_at", job.LeaseExpiresAt)}
	if takeover {
		s.metrics.Result("claim_taken_over")
		s.log.WarnContext(ctx, "approval.claim_taken_over", attrs...)
		return job, nil
	}
	s.log.InfoContext(ctx, "approval.claimed", attrs...)
	return job, nil
}

// RenewClaim extends the lease of the claim executorID holds with token.
func (s *Service) RenewClaim(ctx context.Context, id, executorID string, token int64) (domain.Job, error) {
	id, err := normalizeID(id)
	if err != nil {
		return domain.Job{}, err
	}
	ctx = jobid.WithJobID(ctx, id)
	job, err := s.store.Update(ctx, id, func(j domain.Job) ([]domain.Draft, error) {
		return j.Renew(executorID, token, s.cfg.ClaimLease, s.clock())
	})
	if err != nil {
		s.notHolder(ctx, "renew", executorID, err)
		return job, err
	}
	s.log.DebugContext(ctx, "approval.claim_renewed", slog.String("executor_id", executorID), slog.Time("lease_expires_at", job.LeaseExpiresAt))
	return job, nil
}

// ReportExecution records the executor's progress, including a hash mismatch it detected. Only
// the claim's current holder, with its fencing token, may report; anyone else's report is
// refused (ErrNotHolder) and recorded as report_rejected.
func (s *Service) ReportExecution(ctx context.Context, id string, kind domain.ExecutionKind, executorID string, token int64, result json.RawMessage, detail string) (domain.Job, error) {
	id, err := normalizeID(id)
	if err != nil {
		return domain.Job{}, err
	}
	ctx = jobid.WithJobID(ctx, id)
	job, err := s.store.Update(ctx, id, func(j domain.Job) ([]domain.Draft, error) {
		return j.Report(kind, executorID, token, domain.ExecutionPayload{Result: result, Detail: detail}, s.clock())
	})
	if err != nil {
		s.notHolder(ctx, "report "+string(kind), executorID, err)
		return job, err
	}
	if kind == domain.ExecHashMismatch {
		s.metrics.Result("hash_mismatch")
	}
	s.log.InfoContext(ctx, "approval.execution_"+string(kind), slog.String("executor_id", executorID))
	return job, nil
}

func (s *Service) notHolder(ctx context.Context, attempt, executorID string, err error) {
	if !errors.Is(err, domain.ErrNotHolder) {
		return
	}
	s.metrics.Result("report_rejected")
	s.log.WarnContext(ctx, "approval.report_rejected", slog.String("attempt", attempt), slog.String("executor_id", executorID),
		slog.String("error", err.Error()))
}

// maxLapsed bounds one answer of LapsedClaims.
const maxLapsed = 100

// LapsedClaims lists executing jobs whose holder stopped renewing its lease, oldest claim
// first: an executor takes them over (ClaimJob) and finds out from the workspace what of the
// execution happened.
func (s *Service) LapsedClaims(ctx context.Context, limit int) ([]string, error) {
	if limit <= 0 || limit > maxLapsed {
		limit = maxLapsed
	}
	jobs, err := s.store.List(ctx, ListFilter{Statuses: []domain.Status{domain.StatusExecuting}, Limit: 500})
	if err != nil {
		return nil, err
	}
	now := s.clock()
	var out []string
	for i := len(jobs) - 1; i >= 0 && len(out) < limit; i-- {
		if jobs[i].LeaseLapsed(now) {
			out = append(out, jobs[i].ID)
		}
	}
	return out, nil
}
