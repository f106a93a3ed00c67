package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Sweep expires pending jobs whose pending_ttl has passed and returns how many it expired.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	now := s.clock()
	jobs, err := s.store.List(ctx, ListFilter{Statuses: []domain.Status{domain.StatusPending}, ExpiresBefore: now, Limit: 500})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, j := range jobs {
		got, err := s.store.Update(ctx, j.ID, func(cur domain.Job) ([]domain.Draft, error) {
			return cur.Expire(s.clock()), nil
		})
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return n, err
		}
		if err == nil && got.Status == domain.StatusExpired {
			n++
			s.metrics.Result("expired")
			s.log.InfoContext(jobid.WithJobID(ctx, j.ID), "approval.expired")
		}
	}
	return n, nil
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
