package channel

import (
	"context"
	"fmt"
	"log/slog"
)

// Marks remembers sends that went out (inbox.Marks).
type Marks interface {
	Done(ctx context.Context, key string) (bool, error)
	Mark(ctx context.Context, key string) error
}

// Once runs each named send at most once: for channels whose API has no idempotency key of its
// own (Slack), so a retried event or notification never posts the same message twice.
type Once struct {
	marks Marks
	log   *slog.Logger
	name  string
}

// NewOnce returns a Once over marks; name prefixes its log events.
func NewOnce(marks Marks, name string, log *slog.Logger) *Once {
	return &Once{marks: marks, log: log, name: name}
}

// Do runs send unless key was marked done, and marks it once send succeeded.
func (o *Once) Do(ctx context.Context, key string, send func() error) error {
	done, err := o.marks.Done(ctx, key)
	if err != nil {
		return fmt.Errorf("check sent %s: %w", key, err)
	}
	if done {
		o.log.InfoContext(ctx, o.name+".already_sent", slog.String("key", key))
		return nil
	}
	if err := send(); err != nil {
		return err
	}
	if err := o.marks.Mark(ctx, key); err != nil {
		// Sent but not remembered: a retry could repeat it, which is better than losing it.
		o.log.WarnContext(ctx, o.name+".mark_failed", slog.String("key", key), slog.Any("error", err))
	}
	return nil
}
