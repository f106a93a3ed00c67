package inbox_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

func newStore(t *testing.T) (testinfra.RedisDB, inbox.Config, *inbox.Store) {
	t.Helper()
	r := testinfra.Redis(t)
	cfg := inbox.Config{Stream: r.Prefix + "inbox:test", Group: "g", Seal: testSeal}
	s, err := inbox.NewStore(r.Client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r, cfg, s
}

func fastConsumer(name string) inbox.ConsumerConfig {
	return inbox.ConsumerConfig{
		Name: name, Block: 50 * time.Millisecond, ClaimIdle: 300 * time.Millisecond,
		Backoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, MaxAttempts: 3,
	}
}

// runConsumer starts a consumer and returns a stop function that waits for it to end.
func runConsumer(t *testing.T, r testinfra.RedisDB, cfg inbox.Config, ccfg inbox.ConsumerConfig, h inbox.Handler) func() {
	t.Helper()
	c, err := inbox.NewConsumer(r.Client, cfg, ccfg, h)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("consumer %s: %v", ccfg.Name, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("consumer %s did not stop", ccfg.Name)
		}
	}
	t.Cleanup(stop)
	return stop
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAppendDeduplicates(t *testing.T) {
	r, cfg, s := newStore(t)
	ctx := context.Background()
	res, err := s.Append(ctx,
		inbox.Event{ID: "e1", Key: "chat-a", Payload: []byte("one")},
		inbox.Event{ID: "e2", Key: "chat-a", Payload: []byte("two")},
		inbox.Event{ID: "e1", Key: "chat-a", Payload: []byte("one again")},
	)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stored != 2 || res.Duplicate != 1 || res.StreamIDs[0] == "" || res.StreamIDs[2] != "" {
		t.Fatalf("result = %+v, want 2 stored, 1 duplicate", res)
	}
	// A redelivery of the whole request later is dropped entirely.
	res, err = s.Append(ctx, inbox.Event{ID: "e1", Key: "chat-a"}, inbox.Event{ID: "e2", Key: "chat-a"})
	if err != nil || res.Stored != 0 || res.Duplicate != 2 {
		t.Fatalf("replay: %+v, %v", res, err)
	}
	if n := r.Client.XLen(ctx, cfg.Stream).Val(); n != 2 {
		t.Fatalf("stream length = %d, want 2", n)
	}
	if _, err := s.Append(ctx, inbox.Event{ID: "", Key: "k"}); err == nil {
		t.Fatal("event without id accepted")
	}
}

func TestAppendSurvivesScriptFlush(t *testing.T) {
	r, _, s := newStore(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, inbox.Event{ID: "a", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Client.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := s.Append(ctx, inbox.Event{ID: "b", Key: "k"}, inbox.Event{ID: "a", Key: "k"})
	if err != nil || res.Stored != 1 || res.Duplicate != 1 {
		t.Fatalf("after script flush: %+v, %v", res, err)
	}
}

// TestPerKeyOrderAndCrossKeyConcurrency: one chat's events run strictly one after another in
// append order, while two chats run at the same time.
func TestPerKeyOrderAndCrossKeyConcurrency(t *testing.T) {
	r, cfg, s := newStore(t)
	ctx := context.Background()
	const perKey = 6
	var events []inbox.Event
	for i := range perKey {
		for _, k := range []string{"a", "b"} {
			events = append(events, inbox.Event{ID: fmt.Sprintf("%s%d", k, i), Key: k, Payload: fmt.Appendf(nil, "%d", i)})
		}
	}
	if _, err := s.Append(ctx, events...); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	active := map[string]int{}
	order := map[string][]string{}
	overlap := false
	bothActive := make(chan struct{})
	var once sync.Once
	h := func(ctx context.Context, d inbox.Delivery) error {
		mu.Lock()
		active[d.Key]++
		if active[d.Key] > 1 {
			overlap = true
		}
		if active["a"] > 0 && active["b"] > 0 {
			once.Do(func() { close(bothActive) })
		}
		mu.Unlock()
		// The first event of each chat waits until the other chat runs too: this only finishes
		// when the two chats are processed concurrently.
		if string(d.Payload) == "0" {
			select {
			case <-bothActive:
			case <-time.After(5 * time.Second):
				return inbox.Permanent(errors.New("chats were not processed concurrently"))
			}
		}
		mu.Lock()
		active[d.Key]--
		order[d.Key] = append(order[d.Key], string(d.Payload))
		mu.Unlock()
		return nil
	}
	runConsumer(t, r, cfg, fastConsumer("c1"), h)
	waitFor(t, "all events", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order["a"]) == perKey && len(order["b"]) == perKey
	})
	mu.Lock()
	defer mu.Unlock()
	if overlap {
		t.Fatal("two events of one chat ran concurrently")
	}
	for _, k := range []string{"a", "b"} {
		for i, got := range order[k] {
			if got != fmt.Sprint(i) {
				t.Fatalf("chat %s order = %v", k, order[k])
			}
		}
	}
	pending := r.Client.XPending(ctx, cfg.Stream, cfg.Group).Val()
	if pending.Count != 0 {
		t.Fatalf("pending after processing = %d", pending.Count)
	}
}

// TestCrashedConsumerIsReclaimed: a consumer read events and died before acknowledging; the
// same name picks them up at once after a restart, another consumer takes them over once idle.
func TestCrashedConsumerIsReclaimed(t *testing.T) {
	for _, tc := range []struct{ name, restartAs string }{
		{"same name restarts", "c1"},
		{"other consumer reclaims", "c2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, cfg, s := newStore(t)
			ctx := context.Background()
			if _, err := s.Append(ctx, inbox.Event{ID: "e1", Key: "k1"}, inbox.Event{ID: "e2", Key: "k2"}); err != nil {
				t.Fatal(err)
			}
			started := make(chan string, 2)
			stop := runConsumer(t, r, cfg, fastConsumer("c1"), func(ctx context.Context, d inbox.Delivery) error {
				started <- d.ID
				<-ctx.Done() // never replies: the process "dies" with the events in hand
				return ctx.Err()
			})
			<-started
			<-started
			stop()
			if n := r.Client.XPending(ctx, cfg.Stream, cfg.Group).Val().Count; n != 2 {
				t.Fatalf("pending after crash = %d, want 2", n)
			}
			var mu sync.Mutex
			got := map[string]bool{}
			runConsumer(t, r, cfg, fastConsumer(tc.restartAs), func(_ context.Context, d inbox.Delivery) error {
				mu.Lock()
				defer mu.Unlock()
				if got[d.ID] {
					t.Errorf("event %s handled twice", d.ID)
				}
				if !d.Redelivered {
					t.Errorf("event %s not marked redelivered", d.ID)
				}
				got[d.ID] = true
				return nil
			})
			waitFor(t, "reclaimed events", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return got["e1"] && got["e2"]
			})
			waitFor(t, "acknowledgement", func() bool {
				return r.Client.XPending(ctx, cfg.Stream, cfg.Group).Val().Count == 0
			})
		})
	}
}

// TestSlowEntryIsNotStolen: an entry whose handler is still running is kept fresh, so another
// consumer never reclaims it however long the reply takes.
func TestSlowEntryIsNotStolen(t *testing.T) {
	r, cfg, s := newStore(t)
	ctx := context.Background()
	if _, err := s.Append(ctx, inbox.Event{ID: "slow", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	started := make(chan struct{})
	done := make(chan struct{})
	// A generous claim period keeps this test about the keep-alive, not about machine load.
	slow := func(name string) inbox.ConsumerConfig {
		c := fastConsumer(name)
		c.ClaimIdle = time.Second
		return c
	}
	runConsumer(t, r, cfg, slow("c1"), func(ctx context.Context, d inbox.Delivery) error {
		close(started)
		<-release
		close(done)
		return nil
	})
	<-started
	stolen := make(chan string, 1)
	runConsumer(t, r, cfg, slow("c2"), func(_ context.Context, d inbox.Delivery) error {
		stolen <- d.ID
		return nil
	})
	// Three claim periods pass while c1 still works on the entry.
	select {
	case id := <-stolen:
		t.Fatalf("entry %s taken over while in progress", id)
	case <-time.After(3 * time.Second):
	}
	close(release)
	<-done
	waitFor(t, "acknowledgement", func() bool {
		return r.Client.XPending(ctx, cfg.Stream, cfg.Group).Val().Count == 0
	})
}

func TestRetryThenDeadLetter(t *testing.T) {
	r, cfg, s := newStore(t)
	ctx := context.Background()
	if _, err := s.Append(ctx,
		inbox.Event{ID: "flaky", Key: "k1"},
		inbox.Event{ID: "broken", Key: "k2"},
		inbox.Event{ID: "invalid", Key: "k3"},
	); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	attempts := map[string]int{}
	gaveUp := map[string]bool{}
	ccfg := fastConsumer("c1")
	ccfg.GiveUp = func(_ context.Context, d inbox.Delivery, _ error) {
		mu.Lock()
		defer mu.Unlock()
		gaveUp[d.ID] = true
	}
	runConsumer(t, r, cfg, ccfg, func(_ context.Context, d inbox.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		attempts[d.ID]++
		switch d.ID {
		case "flaky":
			if attempts[d.ID] < 2 {
				return errors.New("peer unavailable")
			}
			return nil
		case "broken":
			return errors.New("always failing")
		default:
			return inbox.Permanent(errors.New("bad event"))
		}
	})
	waitFor(t, "dead letters", func() bool {
		n, _ := s.Dead(ctx)
		return n == 2
	})
	waitFor(t, "acknowledgement", func() bool {
		return r.Client.XPending(ctx, cfg.Stream, cfg.Group).Val().Count == 0
	})
	mu.Lock()
	defer mu.Unlock()
	want := map[string]int{"flaky": 2, "broken": 3, "invalid": 1}
	for id, n := range want {
		if attempts[id] != n {
			t.Errorf("attempts[%s] = %d, want %d", id, attempts[id], n)
		}
	}
	if gaveUp["flaky"] || !gaveUp["broken"] || !gaveUp["invalid"] {
		t.Errorf("gave up on %v", gaveUp)
	}
}

func TestMarks(t *testing.T) {
	r := testinfra.Redis(t)
	ctx := context.Background()
	m := inbox.NewMarks(r.Client, r.Prefix+"sent:", time.Minute)
	if done, err := m.Done(ctx, "k"); err != nil || done {
		t.Fatalf("fresh key done=%v err=%v", done, err)
	}
	if err := m.Mark(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if done, err := m.Done(ctx, "k"); err != nil || !done {
		t.Fatalf("marked key done=%v err=%v", done, err)
	}
}

func BenchmarkAppend(b *testing.B) {
	r := testinfra.Redis(b)
	s, err := inbox.NewStore(r.Client, inbox.Config{Stream: r.Prefix + "inbox:bench", Seal: testSeal})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	payload := make([]byte, 600)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := s.Append(ctx, inbox.Event{ID: fmt.Sprint("ev", i), Key: "chat", Payload: payload}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMetrics(t *testing.T) {
	r := testinfra.Redis(t)
	reg := prometheus.NewRegistry()
	m, err := inbox.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := inbox.Config{Stream: r.Prefix + "inbox:metrics", Group: "g", Metrics: m, Seal: testSeal}
	s, err := inbox.NewStore(r.Client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Append(ctx, inbox.Event{ID: "a", Key: "k"}, inbox.Event{ID: "a", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	runConsumer(t, r, cfg, fastConsumer("c1"), func(context.Context, inbox.Delivery) error { close(done); return nil })
	<-done
	waitFor(t, "acked metric", func() bool { return counter(t, reg, "picoclaw_inbox_entries_total", "acked") == 1 })
	if got := counter(t, reg, "picoclaw_inbox_events_total", "duplicate"); got != 1 {
		t.Fatalf("duplicates = %v", got)
	}
	if got := counter(t, reg, "picoclaw_inbox_events_total", "stored"); got != 1 {
		t.Fatalf("stored = %v", got)
	}
}

func counter(t *testing.T, reg *prometheus.Registry, name, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func TestStreamLagAndWaitMetrics(t *testing.T) {
	r := testinfra.Redis(t)
	reg := prometheus.NewRegistry()
	m, err := inbox.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := inbox.Config{Stream: r.Prefix + "inbox:lag", Group: "g", Metrics: m, Seal: testSeal}
	s, err := inbox.NewStore(r.Client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The group exists (as after a gateway start) but nobody reads: all three entries lag.
	c, err := inbox.NewConsumer(r.Client, cfg, fastConsumer("idle"), func(context.Context, inbox.Delivery) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, inbox.Event{ID: "a", Key: "k"}, inbox.Event{ID: "b", Key: "k"}, inbox.Event{ID: "c", Key: "j"}); err != nil {
		t.Fatal(err)
	}
	if got := gauge(t, reg, "picoclaw_inbox_stream_lag_entries"); got != 3 {
		t.Fatalf("lag before consuming = %v, want 3", got)
	}
	if got := gauge(t, reg, "picoclaw_inbox_stream_length_entries"); got != 3 {
		t.Fatalf("length = %v, want 3", got)
	}
	runConsumer(t, r, cfg, fastConsumer("c1"), func(context.Context, inbox.Delivery) error { return nil })
	waitFor(t, "acked", func() bool { return counter(t, reg, "picoclaw_inbox_entries_total", "acked") == 3 })
	if got := gauge(t, reg, "picoclaw_inbox_stream_lag_entries"); got != 0 {
		t.Fatalf("lag after consuming = %v, want 0", got)
	}
	if got := gauge(t, reg, "picoclaw_inbox_stream_pending_entries"); got != 0 {
		t.Fatalf("pending after consuming = %v, want 0", got)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var waits uint64
	for _, mf := range mfs {
		if mf.GetName() == "picoclaw_inbox_wait_seconds" {
			waits = mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	if waits != 3 {
		t.Fatalf("wait samples = %d, want 3", waits)
	}
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}

var testSeal = []byte("inbox-test-seal-key-0123456789")

// An entry written into the stream by anyone but the gateway (no seal, a wrong seal, an edited
// payload) is never handled: it goes to the dead letters.
func TestForgedEntriesAreNeverHandled(t *testing.T) {
	r := testinfra.Redis(t)
	cfg := inbox.Config{Stream: r.Prefix + "inbox:forged", Group: "g", Seal: testSeal}
	store, err := inbox.NewStore(r.Client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := store.Append(ctx, inbox.Event{ID: "ok-1", Key: "chat", Payload: []byte(`{"user":"U1"}`)}); err != nil {
		t.Fatal(err)
	}
	// Forgeries: no mac, a mac from another key, and a copy of the good entry with its payload changed.
	good, err := r.Client.XRange(ctx, cfg.Stream, "-", "+").Result()
	if err != nil || len(good) != 1 {
		t.Fatalf("stream: %v %v", good, err)
	}
	for _, vals := range []map[string]any{
		{"id": "f-1", "key": "chat", "payload": `{"user":"Uapprover"}`, "meta": "null"},
		{"id": "f-2", "key": "chat", "payload": `{"user":"Uapprover"}`, "meta": "null", "mac": "AAAA"},
		{"id": "ok-1", "key": "chat", "payload": `{"user":"Uapprover"}`, "meta": good[0].Values["meta"], "mac": good[0].Values["mac"]},
	} {
		if err := r.Client.XAdd(ctx, &redis.XAddArgs{Stream: cfg.Stream, Values: vals}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var handled []string
	c, err := inbox.NewConsumer(r.Client, cfg, inbox.ConsumerConfig{Name: "c1", Block: 50 * time.Millisecond},
		func(_ context.Context, d inbox.Delivery) error {
			mu.Lock()
			defer mu.Unlock()
			handled = append(handled, string(d.Payload))
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(cctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		dead, _ := store.Dead(ctx)
		if dead == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dead letters: %d, want 3", dead)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(handled) != 1 || handled[0] != `{"user":"U1"}` {
		t.Fatalf("handled %q, want only the sealed entry", handled)
	}
	if _, err := inbox.NewStore(r.Client, inbox.Config{Stream: "s"}); err == nil {
		t.Fatal("a store without a seal key was made")
	}
}
