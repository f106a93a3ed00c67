package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// MarkOutages wraps a store so that losing the database reads as domain.ErrUnavailable: callers
// then hear "unavailable" (503, CodeUnavailable) and retry later, instead of an internal error.
// Nothing is executed either way: every decision and claim needs the store.
func MarkOutages(next app.Store) app.Store { return outage{next: next} }

type outage struct{ next app.Store }

// Unavailable marks connection-level failures (refused, reset, timed out, dropped mid-query).
func Unavailable(err error) error {
	if err == nil || errors.Is(err, domain.ErrUnavailable) {
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || postgresUnavailable(err) {
		return fmt.Errorf("%w: audit store: %w", domain.ErrUnavailable, err)
	}
	return err
}

func (o outage) Create(ctx context.Context, id string, drafts []domain.Draft) (domain.Job, error) {
	j, err := o.next.Create(ctx, id, drafts)
	return j, Unavailable(err)
}

func (o outage) Update(ctx context.Context, id string, fn func(domain.Job) ([]domain.Draft, error)) (domain.Job, error) {
	j, err := o.next.Update(ctx, id, fn)
	return j, Unavailable(err)
}

func (o outage) UpdateReading(ctx context.Context, id, stream string, fn func(domain.Job, app.StreamReader) ([]domain.Draft, error)) (domain.Job, error) {
	j, err := o.next.UpdateReading(ctx, id, stream, fn)
	return j, Unavailable(err)
}

func (o outage) Get(ctx context.Context, id string) (domain.Job, error) {
	j, err := o.next.Get(ctx, id)
	return j, Unavailable(err)
}

func (o outage) List(ctx context.Context, f app.ListFilter) ([]domain.Job, error) {
	js, err := o.next.List(ctx, f)
	return js, Unavailable(err)
}

func (o outage) Events(ctx context.Context, id string) ([]domain.Event, error) {
	evs, err := o.next.Events(ctx, id)
	return evs, Unavailable(err)
}

func (o outage) Append(ctx context.Context, stream string, drafts []domain.Draft) error {
	return Unavailable(o.next.Append(ctx, stream, drafts))
}

func (o outage) LastEvent(ctx context.Context, stream string, types ...domain.EventType) (*domain.Event, error) {
	e, err := o.next.LastEvent(ctx, stream, types...)
	return e, Unavailable(err)
}

func (o outage) JobIDsOfDay(ctx context.Context, day string) ([]string, error) {
	ids, err := o.next.JobIDsOfDay(ctx, day)
	return ids, Unavailable(err)
}

func (o outage) DueNotices(ctx context.Context, now time.Time, limit int) ([]domain.Notice, error) {
	ns, err := o.next.DueNotices(ctx, now, limit)
	return ns, Unavailable(err)
}

func (o outage) ClaimNotice(ctx context.Context, jobID string, now, retryAt time.Time) (bool, error) {
	ok, err := o.next.ClaimNotice(ctx, jobID, now, retryAt)
	return ok, Unavailable(err)
}

func (o outage) NoticeDone(ctx context.Context, jobID string, at time.Time, outcome string) error {
	return Unavailable(o.next.NoticeDone(ctx, jobID, at, outcome))
}
