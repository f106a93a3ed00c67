package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/idlemem"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Notifier pushes a message to a chat session through the gateway of its channel (the suite's
// push path, gateway.v1 NotificationService.Push); a retried push with the same retry key is
// delivered once. Errors that retrying cannot fix (an unknown session, a channel without a
// gateway, a refused message) wrap domain.ErrInvalid or domain.ErrNotFound; any other error is
// tried again later.
type Notifier interface {
	Push(ctx context.Context, sessionID, jobID, retryKey, text string) error
}

// Delivery of requester notices: how many are taken per pass, how long a failing one is retried.
const (
	noticeBatch      = 100
	noticeFirstRetry = 5 * time.Second
	noticeMaxRetry   = 10 * time.Minute
	// NoticeMaxAge is how long an undeliverable notice is retried before it is given up.
	NoticeMaxAge = 24 * time.Hour
)

// noticeRetryAfter is the wait after the attempt-th attempt: doubling from noticeFirstRetry, at
// most noticeMaxRetry.
func noticeRetryAfter(attempt int) time.Duration {
	d := noticeFirstRetry
	for i := 1; i < attempt && d < noticeMaxRetry; i++ {
		d *= 2
	}
	return min(d, noticeMaxRetry)
}

// kickNotices wakes the dispatcher: a decision may have recorded a notice.
func (s *Service) kickNotices() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// DeliverNotices sends the requester notices that are due and reports how many were delivered.
// Each is claimed first (so two dispatchers never try one notice at once, and one that dies
// mid-attempt leaves it to the next pass), pushed with the job's retry key "<job>:decision" (so
// a repeated attempt is delivered once) and closed; a transient failure is retried with backoff
// for NoticeMaxAge, a permanent one is closed with its reason.
func (s *Service) DeliverNotices(ctx context.Context) (int, error) {
	if s.notifier == nil {
		return 0, nil
	}
	now := s.clock()
	due, err := s.store.DueNotices(ctx, now, noticeBatch)
	if err != nil {
		return 0, fmt.Errorf("requester notices: %w", err)
	}
	sent := 0
	for _, n := range due {
		ok, err := s.deliverNotice(ctx, n, now)
		if err != nil {
			return sent, err
		}
		if ok {
			sent++
		}
	}
	return sent, nil
}

// deliverNotice makes one attempt at n; only a store failure is returned.
func (s *Service) deliverNotice(ctx context.Context, n domain.Notice, now time.Time) (bool, error) {
	// The notice is the last action on the job: all of it runs in the job's trace.
	ctx, span := telemetry.JoinTrace(jobid.WithJobID(ctx, n.JobID), s.tracer, n.TraceParent, "approval.notify_requester", trace.WithAttributes(
		attribute.String("session_id", n.SessionID), attribute.String("decision", string(n.Status)), attribute.Int("attempt", n.Attempts+1)))
	defer span.End()
	claimed, err := s.store.ClaimNotice(ctx, n.JobID, now, now.Add(noticeRetryAfter(n.Attempts+1)))
	if err != nil || !claimed {
		return false, err
	}
	job, err := s.store.Get(ctx, n.JobID)
	if errors.Is(err, domain.ErrNotFound) {
		return false, s.store.NoticeDone(ctx, n.JobID, now, "given up: the job is gone")
	}
	if err != nil {
		return false, err
	}
	log := s.log.With(slog.String("session_id", n.SessionID), slog.String("decision", string(n.Status)), slog.Int("attempt", n.Attempts+1))
	if now.Sub(n.At) > NoticeMaxAge {
		span.SetStatus(codes.Error, "given up")
		log.WarnContext(ctx, "approval.notice_given_up", slog.Duration("age", now.Sub(n.At)))
		return false, s.store.NoticeDone(ctx, n.JobID, now, "given up: undeliverable for "+NoticeMaxAge.String())
	}
	perr := s.notifier.Push(ctx, n.SessionID, n.JobID, n.JobID+":decision", domain.NoticeText(job, n.Status, s.cfg.Location))
	switch {
	case perr == nil:
		log.InfoContext(ctx, "approval.requester_notified")
		return true, s.store.NoticeDone(ctx, n.JobID, s.clock(), "sent")
	case errors.Is(perr, domain.ErrInvalid), errors.Is(perr, domain.ErrNotFound):
		span.RecordError(perr)
		span.SetStatus(codes.Error, "refused")
		log.WarnContext(ctx, "approval.notice_refused", slog.String("error", perr.Error()))
		return false, s.store.NoticeDone(ctx, n.JobID, s.clock(), "refused: "+perr.Error())
	default:
		span.RecordError(perr)
		span.SetStatus(codes.Error, "push failed")
		log.WarnContext(ctx, "approval.notice_failed", slog.String("error", perr.Error()),
			slog.Duration("retry_in", noticeRetryAfter(n.Attempts+1)))
		return false, nil
	}
}

// RunNotices delivers requester notices after each decision and every interval (for retries and
// for notices another instance recorded) until ctx ends.
func (s *Service) RunNotices(ctx context.Context, interval time.Duration) {
	if s.notifier == nil {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.DeliverNotices(ctx); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "approval.notices_failed", slog.String("error", err.Error()))
		}
		idlemem.Settle()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
	}
}
