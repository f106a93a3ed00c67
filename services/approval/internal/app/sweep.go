package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Sweep expires pending jobs whose pending_ttl has passed and returns how many it expired.
func (s *Service) Sweep(ctx context.Context) (int, error) {
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
		got, err := s.expire(ctx, j)
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return n, err
		}
		if err == nil && got.Status == domain.StatusExpired {
			n++
		}
	}
	if n > 0 {
		s.kickNotices()
	}
	return n, nil
}

// expire expires one job in the job's trace.
func (s *Service) expire(ctx context.Context, j domain.Job) (domain.Job, error) {
	ctx, span := telemetry.JoinTrace(jobid.WithJobID(ctx, j.ID), s.tracer, j.TraceParent, "approval.expire")
	defer span.End()
	got, err := s.store.Update(ctx, j.ID, func(cur domain.Job) ([]domain.Draft, error) {
		return cur.Expire(s.clock()), nil
	})
	if err == nil && got.Status == domain.StatusExpired {
		s.metrics.Result("expired")
		s.log.InfoContext(ctx, "approval.expired")
	}
	return got, err
}

// RunSweeper sweeps every interval until ctx ends.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "approval.sweep_failed", slog.String("error", err.Error()))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
