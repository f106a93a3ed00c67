package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/idlemem"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// SweeperLease names the lease that lets one replica of approval sweep at a time.
const SweeperLease = "sweeper"

// Sweep expires pending jobs whose pending_ttl has passed and sends back to pending the
// auto-approved jobs whose grant is no longer in force; it returns how many it expired. Each
// change counts (and is logged) once, by the sweep whose transaction recorded it: another
// replica sweeping at the same moment finds the job already changed.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	n, err := s.expirePending(ctx)
	if err != nil {
		return n, err
	}
	_, err = s.revokeStaleAutoApprovals(ctx)
	return n, err
}

func (s *Service) expirePending(ctx context.Context) (int, error) {
	now := s.clock()
	jobs, err := s.store.List(ctx, ListFilter{Statuses: []domain.Status{domain.StatusPending}, ExpiresBefore: now, Limit: 500})
	if err != nil {
		return 0, err
	}
	if len(jobs) == 0 {
		return 0, nil
	}
	// A sweep that expires jobs is a trace of its own; each expiry runs in its job's trace,
	// linked to it.
	ctx, tick := s.tracer.Start(ctx, "approval.sweep", trace.WithNewRoot(), trace.WithAttributes(attribute.Int("jobs", len(jobs))))
	defer tick.End()
	n := 0
	for _, j := range jobs {
		expired, err := s.expire(ctx, j)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return n, err
		}
		if err == nil && expired {
			n++
		}
	}
	if n > 0 {
		s.kickNotices()
	}
	return n, nil
}

// expire expires one job in the job's trace; expired says whether this call recorded it (a
// replica sweeping at the same moment finds it changed already, and neither counts it twice).
func (s *Service) expire(ctx context.Context, j domain.Job) (expired bool, err error) {
	ctx, span := telemetry.JoinTrace(jobid.WithJobID(ctx, j.ID), s.tracer, j.TraceParent, "approval.expire")
	defer span.End()
	_, err = s.store.Update(ctx, j.ID, func(cur domain.Job) ([]domain.Draft, error) {
		drafts := cur.Expire(s.clock())
		expired = len(drafts) > 0
		return drafts, nil
	})
	if err == nil && expired {
		s.metrics.Result("expired")
		s.log.InfoContext(ctx, "approval.expired")
	}
	return expired, err
}

// revokeStaleAutoApprovals sends every auto-approved job whose grant is no longer the one in
// force back to a person (audited as auto_approval_revoked). Switching Auto-Approve off revokes
// the jobs it finds, but a request that read the grant just before the switch-off records its
// job just after it: without this, that job would stay auto-approved, never claimable (the claim
// checks the grant) and never expiring (only pending jobs expire). A grant that simply ran out
// sends its unclaimed jobs back the same way.
func (s *Service) revokeStaleAutoApprovals(ctx context.Context) (int, error) {
	jobs, err := s.store.List(ctx, ListFilter{Statuses: []domain.Status{domain.StatusAutoApproved}, Limit: 500})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, j := range jobs {
		if j.GrantID == "" {
			continue // allowed by a policy rule, not by a grant
		}
		revoked := false
		_, err := s.store.UpdateReading(ctx, j.ID, domain.StreamAutoApprove, func(cur domain.Job, log StreamReader) ([]domain.Draft, error) {
			revoked = false
			if cur.Status != domain.StatusAutoApproved || cur.GrantID == "" {
				return nil, nil
			}
			now := s.clock()
			active, err := s.grantInForceIn(ctx, log, cur.GrantID, now)
			if err != nil || active {
				return nil, err
			}
			drafts := cur.RevokeAutoApproval(domain.CodeRevokedGrantEnded, now)
			revoked = len(drafts) > 0
			return drafts, nil
		})
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return n, err
		}
		if err == nil && revoked {
			n++
			s.metrics.Result("auto_approval_revoked")
			s.log.WarnContext(jobid.WithJobID(ctx, j.ID), "approval.auto_approval_revoked", slog.String("grant_id", j.GrantID),
				slog.String("reason", "grant no longer in force"))
		}
	}
	return n, nil
}

// SweepIfHolder sweeps when holder has the sweeper lease, taking it when it is free or ran out
// and renewing it for leaseFor; held says whether holder has it. Without leases it always
// sweeps.
func (s *Service) SweepIfHolder(ctx context.Context, holder string, leaseFor time.Duration) (held bool, expired int, err error) {
	if s.leases != nil {
		now := s.clock()
		held, err = s.leases.AcquireLease(ctx, SweeperLease, holder, now, now.Add(leaseFor))
		if err != nil || !held {
			return false, 0, err
		}
	}
	expired, err = s.Sweep(ctx)
	return true, expired, err
}

// RunSweeper sweeps every interval until ctx ends. With leases (WithLeases) only the replica
// that holds the sweeper lease sweeps; it renews the lease at every tick, for three intervals,
// so another replica takes over within a few intervals of its stopping, and it gives the lease
// up when it stops.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration, holder string) {
	t := time.NewTicker(interval)
	defer t.Stop()
	held := false
	defer func() {
		if held && s.leases != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := s.leases.ReleaseLease(rctx, SweeperLease, holder); err != nil {
				s.log.WarnContext(ctx, "approval.sweeper_release_failed", slog.String("error", err.Error()))
			}
		}
	}()
	for {
		h, _, err := s.SweepIfHolder(ctx, holder, 3*interval)
		if err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "approval.sweep_failed", slog.String("error", err.Error()))
		}
		idlemem.Settle()
		if h != held {
			event := "approval.sweeper_standby"
			if h {
				event = "approval.sweeper_active"
			}
			s.log.InfoContext(ctx, event, slog.String("holder", holder))
			held = h
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
