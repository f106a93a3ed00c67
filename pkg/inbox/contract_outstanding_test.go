package inbox_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
)

// testOutstanding: a key has entries outstanding from their append until they are acknowledged
// or moved to the dead letters — read or not, handled or waiting — and other keys are not
// affected.
func testOutstanding(t *testing.T, b *backend) {
	cfg := testConfig(b, "outstanding")
	s := newStore(t, b.engine, cfg)
	ctx := context.Background()
	outstanding := func(key string) bool {
		t.Helper()
		yes, err := s.Outstanding(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return yes
	}
	if outstanding("a") {
		t.Fatal("a key never appended to is outstanding")
	}
	if _, err := s.Append(ctx, inbox.Event{ID: "a1", Key: "a", Payload: []byte("ok")},
		inbox.Event{ID: "a2", Key: "a", Payload: []byte("fail")}); err != nil {
		t.Fatal(err)
	}
	if !outstanding("a") || outstanding("b") {
		t.Fatalf("after appending to a: a=%v b=%v", outstanding("a"), outstanding("b"))
	}
	release := make(chan struct{})
	handling := make(chan string, 4)
	h := func(ctx context.Context, d inbox.Delivery) error {
		handling <- d.ID
		<-release
		if string(d.Payload) == "fail" {
			return inbox.Permanent(context.Canceled)
		}
		return nil
	}
	runConsumer(t, b.engine, cfg, fastConsumer("c1"), h)
	if id := <-handling; id != "a1" {
		t.Fatalf("handled %s first", id)
	}
	if !outstanding("a") {
		t.Fatal("a key whose entry is being handled is not outstanding")
	}
	close(release)
	waitFor(t, "acknowledgement and dead letter", settled(t, s))
	waitFor(t, "nothing outstanding", func() bool { return !outstanding("a") })
	if n := dead(t, s); n != 1 {
		t.Fatalf("dead letters = %d", n)
	}
	// A duplicate of a settled event is not stored again, so nothing becomes outstanding.
	if _, err := s.Append(ctx, inbox.Event{ID: "a1", Key: "a", Payload: []byte("ok")}); err != nil {
		t.Fatal(err)
	}
	if outstanding("a") {
		t.Fatal("a duplicate made the key outstanding")
	}
}

// testBuryNew: an event can go to the dead letters without being queued first — sealed,
// masked, deduplicated like an append — and a replay queues and delivers it once.
func testBuryNew(t *testing.T, b *backend) {
	cfg := testConfig(b, "burynew")
	s := newStore(t, b.engine, cfg)
	ctx := context.Background()
	ev := inbox.Event{ID: "send:1", Key: "chat-1", Payload: []byte("p1"), Meta: map[string]string{"traceparent": "00-x"}}
	cause := errors.New("LINE refused: 400 with Authorization: Bearer abcdefghijklmnop0123")
	stored, err := s.BuryNew(ctx, ev, inbox.DeadPermanent, cause)
	if err != nil || !stored {
		t.Fatalf("bury = %v, %v", stored, err)
	}
	if again, err := s.BuryNew(ctx, ev, inbox.DeadPermanent, cause); err != nil || again {
		t.Fatalf("bury again = %v, %v", again, err)
	}
	if res, err := s.Append(ctx, ev); err != nil || res.Duplicate != 1 {
		t.Fatalf("append after bury = %+v, %v", res, err)
	}
	if yes, err := s.Outstanding(ctx, "chat-1"); err != nil || yes {
		t.Fatalf("a dead letter is outstanding: %v, %v", yes, err)
	}
	all := deadLetters(t, s)
	if len(all) != 1 {
		t.Fatalf("dead letters %+v", all)
	}
	dl := all[0]
	if dl.EventID != "send:1" || dl.Key != "chat-1" || string(dl.Payload) != "p1" || dl.Kind != inbox.DeadPermanent ||
		dl.Attempts != 1 || dl.Meta["traceparent"] != "00-x" || dl.DiedAt.IsZero() || dl.Replayed != nil {
		t.Fatalf("dead letter %+v", dl)
	}
	if strings.Contains(dl.Reason, "abcdefghijklmnop0123") || !strings.Contains(dl.Reason, "LINE refused: 400") {
		t.Fatalf("reason not masked or lost: %q", dl.Reason)
	}
	if !dl.StoredAt.Equal(dl.DiedAt) || dl.Entry != "" {
		t.Fatalf("never queued: stored %v, died %v, entry %q", dl.StoredAt, dl.DiedAt, dl.Entry)
	}
	for range 2 {
		if _, err := s.Replay(ctx, dl.ID); err != nil {
			t.Fatal(err)
		}
	}
	// The replayed event is outstanding for its key like any appended one, until handled.
	if yes, err := s.Outstanding(ctx, "chat-1"); err != nil || !yes {
		t.Fatalf("a replayed event is not outstanding: %v, %v", yes, err)
	}
	var mu sync.Mutex
	var got []string
	runConsumer(t, b.engine, cfg, fastConsumer("c1"), func(_ context.Context, d inbox.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, d.ID+"="+string(d.Payload))
		return nil
	})
	waitFor(t, "the replayed event", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 1
	})
	waitFor(t, "acknowledgement", settled(t, s))
	waitFor(t, "nothing outstanding", func() bool {
		yes, err := s.Outstanding(ctx, "chat-1")
		return err == nil && !yes
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != "send:1=p1" {
		t.Fatalf("handled %v", got)
	}
}
