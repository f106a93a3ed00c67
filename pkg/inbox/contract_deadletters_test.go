package inbox_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
)

// deadLetters lists every dead letter of s, newest first, a page of two at a time.
func deadLetters(t *testing.T, s *inbox.Store) []inbox.DeadLetter {
	t.Helper()
	var all []inbox.DeadLetter
	before := ""
	for {
		page, err := s.ListDead(context.Background(), inbox.DeadQuery{Before: before, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if len(page) < 2 {
			return all
		}
		before = page[len(page)-1].ID
	}
}

// Every dead letter says why it died — the kind, the last error with secrets masked, the
// attempts, when the event was stored and when it died — and keeps the event as stored.
func testDeadLettersSayWhy(t *testing.T, b *backend) {
	cfg := testConfig(b, "why")
	s := newStore(t, b.engine, cfg)
	ctx := context.Background()
	before := time.Now().Add(-time.Second)
	if _, err := s.Append(ctx,
		inbox.Event{ID: "refused", Key: "k1", Payload: []byte("p1"), Meta: map[string]string{"traceparent": "00-x"}},
		inbox.Event{ID: "flaky", Key: "k2", Payload: []byte("p2")},
	); err != nil {
		t.Fatal(err)
	}
	meta, _ := inbox.SealOf(cfg, inbox.Event{ID: "forged"})
	b.forge(t, cfg.Stream, "forged", "k3", "p3", meta, "AAAA")
	runConsumer(t, b.engine, cfg, fastConsumer("c1"), func(_ context.Context, d inbox.Delivery) error {
		if d.ID == "refused" {
			return inbox.Permanent(errors.New("LINE refused: 400 with Authorization: Bearer abcdefghijklmnop0123"))
		}
		return errors.New("503 from chat-mio")
	})
	waitFor(t, "3 dead letters", func() bool { return dead(t, s) == 3 })
	waitFor(t, "acknowledgement", settled(t, s))
	all := deadLetters(t, s)
	if len(all) != 3 {
		t.Fatalf("listed %d dead letters, want 3", len(all))
	}
	byEvent := map[string]inbox.DeadLetter{}
	for i, dl := range all {
		if i > 0 && !(all[i-1].DiedAt.After(dl.DiedAt) || all[i-1].DiedAt.Equal(dl.DiedAt)) {
			t.Errorf("not newest first: %s before %s", all[i-1].ID, dl.ID)
		}
		byEvent[dl.EventID] = dl
	}
	refused, flaky, forged := byEvent["refused"], byEvent["flaky"], byEvent["forged"]
	if refused.Kind != inbox.DeadPermanent || refused.Attempts != 1 || string(refused.Payload) != "p1" || refused.Key != "k1" ||
		refused.Meta["traceparent"] != "00-x" || refused.Replayed != nil {
		t.Errorf("permanent dead letter %+v", refused)
	}
	if strings.Contains(refused.Reason, "abcdefghijklmnop0123") || !strings.Contains(refused.Reason, "LINE refused: 400") {
		t.Errorf("reason not masked or lost: %q", refused.Reason)
	}
	if flaky.Kind != inbox.DeadAttempts || flaky.Attempts != 3 || flaky.Reason != "503 from chat-mio" {
		t.Errorf("attempts dead letter %+v", flaky)
	}
	if forged.Kind != inbox.DeadForged || forged.Reason == "" {
		t.Errorf("forged dead letter %+v", forged)
	}
	for _, dl := range all {
		if dl.StoredAt.Before(before) || dl.DiedAt.Before(dl.StoredAt) || dl.Entry == "" {
			t.Errorf("%s: stored %v died %v entry %q", dl.EventID, dl.StoredAt, dl.DiedAt, dl.Entry)
		}
		got, err := s.DeadLetter(ctx, dl.ID)
		if err != nil || got.EventID != dl.EventID || got.Kind != dl.Kind || got.Reason != dl.Reason {
			t.Errorf("show %s = %+v, %v", dl.ID, got, err)
		}
	}
	for _, id := range []string{"1-999", "nonsense", ""} {
		if _, err := s.DeadLetter(ctx, id); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("show %q: %v, want ErrNotFound", id, err)
		}
	}
	// Dead letters of another stream are not this one's.
	other := newStore(t, b.engine, testConfig(b, "other"))
	if _, err := other.DeadLetter(ctx, refused.ID); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("another stream shows %s: %v", refused.ID, err)
	}
}

// Replay puts the event back exactly as stored; replaying again — also after a restart —
// returns the first replay and enqueues nothing.
func testReplayIsIdempotent(t *testing.T, b *backend) {
	cfg := testConfig(b, "replay")
	s := newStore(t, b.engine, cfg)
	ctx := context.Background()
	if _, err := s.Append(ctx, inbox.Event{ID: "e1", Key: "chat", Payload: []byte("hello"), Meta: map[string]string{"traceparent": "00-y"}}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []inbox.Delivery
	fail := true
	runConsumer(t, b.engine, cfg, fastConsumer("c1"), func(_ context.Context, d inbox.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, d)
		if fail {
			return inbox.Permanent(errors.New("blocked"))
		}
		return nil
	})
	waitFor(t, "the dead letter", func() bool { return dead(t, s) == 1 })
	waitFor(t, "acknowledgement", settled(t, s))
	dl := deadLetters(t, s)[0]
	mu.Lock()
	fail = false
	mu.Unlock()
	first, err := s.Replay(ctx, dl.ID)
	if err != nil || first.Already || first.Entry == "" {
		t.Fatalf("replay = %+v, %v", first, err)
	}
	again, err := s.Replay(ctx, dl.ID)
	if err != nil || !again.Already || again.Entry != first.Entry {
		t.Fatalf("second replay = %+v, %v (first %+v)", again, err, first)
	}
	waitFor(t, "the replayed event handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 2
	})
	waitFor(t, "acknowledgement", settled(t, s))
	restarted := newStore(t, b.restart(), cfg)
	late, err := restarted.Replay(ctx, dl.ID)
	if err != nil || !late.Already || late.Entry != first.Entry {
		t.Fatalf("replay after a restart = %+v, %v", late, err)
	}
	shown, err := restarted.DeadLetter(ctx, dl.ID)
	if err != nil || shown.Replayed == nil || shown.Replayed.Entry != first.Entry || shown.Replayed.At.IsZero() {
		t.Fatalf("replayed dead letter %+v, %v", shown, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("handled %d times, want the first try and one replay", len(seen))
	}
	r := seen[1]
	if r.ID != "e1" || r.Key != "chat" || string(r.Payload) != "hello" || r.Meta["traceparent"] != "00-y" || r.StreamID != first.Entry {
		t.Fatalf("replayed delivery %+v", r)
	}
}

// A dead letter without this stream's seal (a forged entry, or one edited in the storage) is
// never put back.
func testForgedDeadLettersAreNotReplayed(t *testing.T, b *backend) {
	cfg := testConfig(b, "forged-replay")
	s := newStore(t, b.engine, cfg)
	meta, mac := inbox.SealOf(cfg, inbox.Event{ID: "x", Key: "chat", Payload: []byte("genuine")})
	b.forge(t, cfg.Stream, "x", "chat", "edited", meta, mac)
	runConsumer(t, b.engine, cfg, fastConsumer("c1"), func(context.Context, inbox.Delivery) error {
		t.Error("a forged entry was handled")
		return nil
	})
	waitFor(t, "the dead letter", func() bool { return dead(t, s) == 1 })
	dl := deadLetters(t, s)[0]
	if _, err := s.Replay(context.Background(), dl.ID); !errors.Is(err, inbox.ErrUnsealed) {
		t.Fatalf("replay of a forged entry: %v, want ErrUnsealed", err)
	}
	if st := stats(t, s); st.Pending != 0 || (st.Lag != 0 && st.Lag != -1) {
		t.Fatalf("something was enqueued: %+v", st)
	}
}

func testDropDeadLetter(t *testing.T, b *backend) {
	cfg := testConfig(b, "drop")
	s := newStore(t, b.engine, cfg)
	ctx := context.Background()
	if _, err := s.Append(ctx, inbox.Event{ID: "a", Key: "k"}, inbox.Event{ID: "b", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	stop := runConsumer(t, b.engine, cfg, fastConsumer("c1"), func(context.Context, inbox.Delivery) error {
		return inbox.Permanent(errors.New("no"))
	})
	waitFor(t, "2 dead letters", func() bool { return dead(t, s) == 2 })
	stop() // the replayed event stays in the stream
	all := deadLetters(t, s)
	if _, err := s.Replay(ctx, all[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Drop(ctx, all[0].ID); err != nil {
		t.Fatal(err)
	}
	for _, op := range []func() error{
		func() error { return s.Drop(ctx, all[0].ID) },
		func() error { _, err := s.Replay(ctx, all[0].ID); return err },
		func() error { _, err := s.DeadLetter(ctx, all[0].ID); return err },
	} {
		if err := op(); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("after drop: %v, want ErrNotFound", err)
		}
	}
	if left := deadLetters(t, s); len(left) != 1 || left[0].ID != all[1].ID || dead(t, s) != 1 {
		t.Fatalf("left %+v", left)
	}
}

// An ack that fails (the engine drops the connection after the handler succeeded) is tried
// again until it succeeds, however long that takes; the entry is not redelivered meanwhile, so
// its handler runs once. The retried ack settles the chat's order with it: the chat's next entry
// gets its turn, and no order record is left.
func testFailedAckIsRetriedNotRedelivered(t *testing.T, b *backend) {
	cfg := testConfig(b, "ack")
	engine, acked := inbox.FailAcks(b.engine, 12)
	s := newStore(t, engine, cfg)
	if _, err := s.Append(context.Background(),
		inbox.Event{ID: "e1", Key: "chat", Payload: []byte("x")},
		inbox.Event{ID: "e2", Key: "chat", Payload: []byte("y")},
	); err != nil {
		t.Fatal(err)
	}
	h := newHandled()
	ccfg := fastConsumer("c1")
	ccfg.ClaimIdle = 50 * time.Millisecond // far shorter than the failing acks last
	runConsumer(t, engine, cfg, ccfg, func(_ context.Context, d inbox.Delivery) error {
		h.add(d)
		return nil
	})
	waitFor(t, "the acks", func() bool { return acked() == 2 })
	waitFor(t, "acknowledgement", settled(t, s))
	noLeftovers(t, b, cfg.Stream)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.count["e1"] != 1 || h.count["e2"] != 1 || strings.Join(h.order["chat"], ",") != "e1,e2" {
		t.Fatalf("handled %v in the order %v, want e1 then e2, each once", h.count, h.order["chat"])
	}
}
