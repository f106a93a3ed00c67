package inbox_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
)

// A transient failure is retried for as long as the entry is younger than MaxAge — past any
// attempt count — and answered once the dependency is back; nothing is dead-lettered.
func TestTransientFailureIsRetriedUntilItSucceeds(t *testing.T) {
	r, cfg, s := newStore(t)
	if _, err := s.Append(context.Background(), inbox.Event{ID: "e1", Key: "chat-1", Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	ccfg := fastConsumer("c-transient")
	ccfg.MaxAttempts = 0 // only MaxAge bounds the retries
	ccfg.GiveUp = func(context.Context, inbox.Delivery, error) { t.Error("gave up on a transient failure") }
	runConsumer(t, r, cfg, ccfg, func(context.Context, inbox.Delivery) error {
		if calls.Add(1) <= 12 {
			return errors.New("chat-mio unavailable")
		}
		return nil
	})
	waitFor(t, "the 13th attempt", func() bool { return calls.Load() >= 13 })
	waitFor(t, "the ack", func() bool {
		p, err := r.Client.XPending(context.Background(), cfg.Stream, cfg.Group).Result()
		return err == nil && p.Count == 0
	})
	if n, err := s.Dead(context.Background()); err != nil || n != 0 {
		t.Fatalf("dead letters %d (%v)", n, err)
	}
}

// An entry older than MaxAge that still fails goes to the dead letters and the user is told.
func TestTransientFailurePastMaxAgeIsDeadLettered(t *testing.T) {
	r, cfg, s := newStore(t)
	if _, err := s.Append(context.Background(), inbox.Event{ID: "e1", Key: "chat-1", Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	var gaveUp atomic.Bool
	ccfg := fastConsumer("c-old")
	ccfg.MaxAttempts, ccfg.MaxAge = 0, 50*time.Millisecond
	ccfg.GiveUp = func(context.Context, inbox.Delivery, error) { gaveUp.Store(true) }
	runConsumer(t, r, cfg, ccfg, func(context.Context, inbox.Delivery) error { return errors.New("still down") })
	waitFor(t, "the dead letter", func() bool {
		n, err := s.Dead(context.Background())
		return err == nil && n == 1
	})
	if !gaveUp.Load() {
		t.Fatal("the user was not told")
	}
}
