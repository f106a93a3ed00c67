package inbox_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// backend is one engine under the contract tests, with what the tests need to look behind it.
type backend struct {
	engine inbox.Engine
	// prefix starts every stream and mark name of the test.
	prefix string
	// reopen drops the engine's connections and opens the storage again (see restart).
	reopen func() inbox.Engine
	// seen counts the dedupe ids of stream still stored once the engine's expiry has run.
	seen func(t *testing.T, stream string) int64
	// forge writes an entry into stream as someone with write access to the storage could,
	// bypassing Store (no dedupe, any seal).
	forge func(t *testing.T, stream, id, key, payload, meta, mac string)
	// leftovers counts the order records (order.go) of stream still stored.
	leftovers func(t *testing.T, stream string) int64
}

// restart is what a restarted process sees: the same storage, new connections. Stores and
// consumers made on the engine before must not be used any more.
func (b *backend) restart() inbox.Engine {
	b.engine = b.reopen()
	return b.engine
}

// noLeftovers fails t when an order record of stream is left: every entry settled (acknowledged
// or buried) left its key's order in the same step.
func noLeftovers(t *testing.T, b *backend, stream string) {
	t.Helper()
	if n := b.leftovers(t, stream); n != 0 {
		t.Fatalf("%d order records left after every entry settled", n)
	}
}

// contract is every behaviour Store, Consumer and Marks have on any engine.
var contract = []struct {
	name string
	run  func(t *testing.T, b *backend)
}{
	{"AppendDeduplicates", testAppendDeduplicates},
	{"DedupeSurvivesRestart", testDedupeSurvivesRestart},
	{"ExpiredDedupeIDsAreSwept", testExpiredDedupeIDsAreSwept},
	{"PerKeyOrderAndCrossKeyConcurrency", testPerKeyOrderAndCrossKeyConcurrency},
	{"ConsumersShareTheGroup", testConsumersShareTheGroup},
	{"CrashedConsumerIsReclaimed", testCrashedConsumerIsReclaimed},
	{"SlowEntryIsNotStolen", testSlowEntryIsNotStolen},
	{"RetryThenDeadLetter", testRetryThenDeadLetter},
	{"TransientFailureIsRetriedUntilItSucceeds", testTransientFailureIsRetriedUntilItSucceeds},
	{"TransientFailurePastMaxAgeIsDeadLettered", testTransientFailurePastMaxAgeIsDeadLettered},
	{"ForgedEntriesAreNeverHandled", testForgedEntriesAreNeverHandled},
	{"DeadLettersSayWhy", testDeadLettersSayWhy},
	{"ReplayIsIdempotent", testReplayIsIdempotent},
	{"ForgedDeadLettersAreNotReplayed", testForgedDeadLettersAreNotReplayed},
	{"DropDeadLetter", testDropDeadLetter},
	{"FailedAckIsRetriedNotRedelivered", testFailedAckIsRetriedNotRedelivered},
	{"Marks", testMarks},
	{"Metrics", testMetrics},
	{"StreamLagAndWaitMetrics", testStreamLagAndWaitMetrics},
	{"Outstanding", testOutstanding},
	{"BuryNew", testBuryNew},
}

func runContract(t *testing.T, newBackend func(t *testing.T) *backend) {
	for _, c := range contract {
		t.Run(c.name, func(t *testing.T) { c.run(t, newBackend(t)) })
	}
}

var testSeal = []byte("inbox-test-seal-key-0123456789")

func testConfig(b *backend, name string) inbox.Config {
	return inbox.Config{Stream: b.prefix + "inbox:" + name, Group: "g", Seal: testSeal}
}

func newStore(t *testing.T, e inbox.Engine, cfg inbox.Config) *inbox.Store {
	t.Helper()
	s, err := inbox.NewStoreOn(e, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func fastConsumer(name string) inbox.ConsumerConfig {
	return inbox.ConsumerConfig{
		Name: name, Block: 50 * time.Millisecond, ClaimIdle: 300 * time.Millisecond,
		Backoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, MaxAttempts: 3,
	}
}

// runConsumer starts a consumer and returns a stop function that waits for it to end.
func runConsumer(t testing.TB, e inbox.Engine, cfg inbox.Config, ccfg inbox.ConsumerConfig, h inbox.Handler) func() {
	t.Helper()
	c, err := inbox.NewConsumerOn(e, cfg, ccfg, h)
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

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testinfra.Eventually(t, 10*time.Second, what, cond)
}

func stats(t testing.TB, s *inbox.Store) inbox.Stats {
	t.Helper()
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// settled: the group exists and holds no unacknowledged entry.
func settled(t testing.TB, s *inbox.Store) func() bool {
	return func() bool {
		st := stats(t, s)
		return st.Group && st.Pending == 0
	}
}

func dead(t testing.TB, s *inbox.Store) int64 {
	t.Helper()
	n, err := s.Dead(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// handled records what a handler saw, by event id.
type handled struct {
	mu    sync.Mutex
	count map[string]int
	redel map[string]bool
	order map[string][]string // by key
}

func newHandled() *handled {
	return &handled{count: map[string]int{}, redel: map[string]bool{}, order: map[string][]string{}}
}

func (h *handled) add(d inbox.Delivery) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.count[d.ID]++
	h.redel[d.ID] = d.Redelivered
	h.order[d.Key] = append(h.order[d.Key], d.ID)
}

func (h *handled) times(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count[id]
}

func (h *handled) distinct() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.count)
}

func testAppendDeduplicates(t *testing.T, b *backend) {
	s := newStore(t, b.engine, testConfig(b, "test"))
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
	if st := stats(t, s); st.Length != 2 || st.Group {
		t.Fatalf("stats = %+v, want 2 entries and no group", st)
	}
	if _, err := s.Append(ctx, inbox.Event{ID: "", Key: "k"}); err == nil {
		t.Fatal("event without id accepted")
	}
	if _, err := inbox.NewStoreOn(b.engine, inbox.Config{Stream: "s"}); err == nil {
		t.Fatal("a store without a seal key was made")
	}
}

func testDedupeSurvivesRestart(t *testing.T, b *backend) {
	cfg := testConfig(b, "test")
	ctx := context.Background()
	if _, err := newStore(t, b.engine, cfg).Append(ctx, inbox.Event{ID: "e1", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, b.restart(), cfg)
	res, err := s.Append(ctx, inbox.Event{ID: "e1", Key: "k"}, inbox.Event{ID: "e2", Key: "k"})
	if err != nil || res.Stored != 1 || res.Duplicate != 1 || res.StreamIDs[1] == "" {
		t.Fatalf("after restart: %+v, %v", res, err)
	}
}

// An event id is forgotten once DedupeTTL passed (Redis: the key's TTL; SQLite: the sweeper),
// and the event can be stored again.
func testExpiredDedupeIDsAreSwept(t *testing.T, b *backend) {
	cfg := testConfig(b, "test")
	cfg.DedupeTTL = time.Second // Redis counts in seconds
	s := newStore(t, b.engine, cfg)
	ctx := context.Background()
	if _, err := s.Append(ctx, inbox.Event{ID: "e1", Key: "k"}, inbox.Event{ID: "e2", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	if n := b.seen(t, cfg.Stream); n != 2 {
		t.Fatalf("dedupe ids stored = %d, want 2", n)
	}
	waitFor(t, "the dedupe ids to expire", func() bool { return b.seen(t, cfg.Stream) == 0 })
	res, err := s.Append(ctx, inbox.Event{ID: "e1", Key: "k"})
	if err != nil || res.Stored != 1 {
		t.Fatalf("after expiry: %+v, %v", res, err)
	}
}

// One chat's events run strictly one after another in append order, while two chats run at
// the same time.
func testPerKeyOrderAndCrossKeyConcurrency(t *testing.T, b *backend) {
	cfg := testConfig(b, "test")
	s := newStore(t, b.engine, cfg)
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
	runConsumer(t, b.engine, cfg, fastConsumer("c1"), h)
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
	waitFor(t, "acknowledgement", settled(t, s))
	noLeftovers(t, b, cfg.Stream)
	if n := dead(t, s); n != 0 {
		t.Fatalf("dead letters = %d", n)
	}
}

// Two consumers of one group split the stream: every event is handled exactly once.
func testConsumersShareTheGroup(t *testing.T, b *backend) {
	cfg := testConfig(b, "test")
	s := newStore(t, b.engine, cfg)
	ctx := context.Background()
	seen := newHandled()
	h := func(_ context.Context, d inbox.Delivery) error {
		seen.add(d)
		return nil
	}
	runConsumer(t, b.engine, cfg, fastConsumer("c1"), h)
	runConsumer(t, b.engine, cfg, fastConsumer("c2"), h)
	const n = 60
	for i := range n {
		if _, err := s.Append(ctx, inbox.Event{ID: fmt.Sprint("e", i), Key: fmt.Sprint("chat-", i%4)}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every event", func() bool { return seen.distinct() == n })
	waitFor(t, "acknowledgement", settled(t, s))
	for i := range n {
		if c := seen.times(fmt.Sprint("e", i)); c != 1 {
			t.Errorf("event e%d handled %d times", i, c)
		}
	}
}

// A consumer read events and died before acknowledging them: the same name picks them up at
// once after a restart of the process, another consumer takes them over once idle. An event
// acknowledged before the crash is never handled again.
func testCrashedConsumerIsReclaimed(t *testing.T, b *backend) {
	for _, tc := range []struct{ name, restartAs string }{
		{"same name restarts", "c1"},
		{"other consumer reclaims", "c2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(b, "crash-"+tc.restartAs)
			s := newStore(t, b.engine, cfg)
			ctx := context.Background()
			if _, err := s.Append(ctx, inbox.Event{ID: "done", Key: "k0"}, inbox.Event{ID: "e1", Key: "k1"}, inbox.Event{ID: "e2", Key: "k2"}); err != nil {
				t.Fatal(err)
			}
			started := make(chan string, 3)
			stop := runConsumer(t, b.engine, cfg, fastConsumer("c1"), func(ctx context.Context, d inbox.Delivery) error {
				started <- d.ID
				if d.ID == "done" {
					return nil
				}
				<-ctx.Done() // never replies: the process "dies" with the events in hand
				return ctx.Err()
			})
			for range 3 {
				<-started
			}
			waitFor(t, "the first ack", func() bool { return stats(t, s).Pending == 2 })
			stop()
			e := b.restart()
			s = newStore(t, e, cfg)
			if n := stats(t, s).Pending; n != 2 {
				t.Fatalf("pending after crash = %d, want 2", n)
			}
			seen := newHandled()
			runConsumer(t, e, cfg, fastConsumer(tc.restartAs), func(_ context.Context, d inbox.Delivery) error {
				seen.add(d)
				return nil
			})
			waitFor(t, "reclaimed events", func() bool { return seen.times("e1") > 0 && seen.times("e2") > 0 })
			waitFor(t, "acknowledgement", settled(t, s))
			seen.mu.Lock()
			defer seen.mu.Unlock()
			for _, id := range []string{"e1", "e2"} {
				if seen.count[id] != 1 || !seen.redel[id] {
					t.Errorf("event %s handled %d times, redelivered %v", id, seen.count[id], seen.redel[id])
				}
			}
			if seen.count["done"] != 0 {
				t.Error("an acknowledged event was delivered again")
			}
		})
	}
}

// An entry whose handler is still running is kept fresh, so another consumer never reclaims it
// however long the reply takes.
func testSlowEntryIsNotStolen(t *testing.T, b *backend) {
	cfg := testConfig(b, "test")
	s := newStore(t, b.engine, cfg)
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
	runConsumer(t, b.engine, cfg, slow("c1"), func(ctx context.Context, d inbox.Delivery) error {
		close(started)
		<-release
		close(done)
		return nil
	})
	<-started
	stolen := make(chan string, 1)
	runConsumer(t, b.engine, cfg, slow("c2"), func(_ context.Context, d inbox.Delivery) error {
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
	waitFor(t, "acknowledgement", settled(t, s))
}

func testRetryThenDeadLetter(t *testing.T, b *backend) {
	cfg := testConfig(b, "test")
	s := newStore(t, b.engine, cfg)
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
	runConsumer(t, b.engine, cfg, ccfg, func(_ context.Context, d inbox.Delivery) error {
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
	waitFor(t, "dead letters", func() bool { return dead(t, s) == 2 })
	waitFor(t, "acknowledgement", settled(t, s))
	noLeftovers(t, b, cfg.Stream)
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

// A transient failure is retried for as long as the entry is younger than MaxAge — past any
// attempt count — and answered once the dependency is back; nothing is dead-lettered.
func testTransientFailureIsRetriedUntilItSucceeds(t *testing.T, b *backend) {
	cfg := testConfig(b, "test")
	s := newStore(t, b.engine, cfg)
	if _, err := s.Append(context.Background(), inbox.Event{ID: "e1", Key: "chat-1", Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	ccfg := fastConsumer("c-transient")
	ccfg.MaxAttempts = 0 // only MaxAge bounds the retries
	ccfg.GiveUp = func(context.Context, inbox.Delivery, error) { t.Error("gave up on a transient failure") }
	runConsumer(t, b.engine, cfg, ccfg, func(context.Context, inbox.Delivery) error {
		if calls.Add(1) <= 12 {
			return errors.New("chat-mio unavailable")
		}
		return nil
	})
	waitFor(t, "the 13th attempt", func() bool { return calls.Load() >= 13 })
	waitFor(t, "the ack", settled(t, s))
	if n := dead(t, s); n != 0 {
		t.Fatalf("dead letters %d", n)
	}
}

// An entry older than MaxAge that still fails goes to the dead letters and the user is told.
func testTransientFailurePastMaxAgeIsDeadLettered(t *testing.T, b *backend) {
	cfg := testConfig(b, "test")
	s := newStore(t, b.engine, cfg)
	if _, err := s.Append(context.Background(), inbox.Event{ID: "e1", Key: "chat-1", Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	var gaveUp atomic.Bool
	ccfg := fastConsumer("c-old")
	ccfg.MaxAttempts, ccfg.MaxAge = 0, 50*time.Millisecond
	ccfg.GiveUp = func(context.Context, inbox.Delivery, error) { gaveUp.Store(true) }
	runConsumer(t, b.engine, cfg, ccfg, func(context.Context, inbox.Delivery) error { return errors.New("still down") })
	waitFor(t, "the dead letter", func() bool { return dead(t, s) == 1 })
	if !gaveUp.Load() {
		t.Fatal("the user was not told")
	}
}

// An entry written into the stream by anyone but the gateway (no seal, a wrong seal, an edited
// payload) is never handled: it goes to the dead letters.
func testForgedEntriesAreNeverHandled(t *testing.T, b *backend) {
	cfg := testConfig(b, "forged")
	store := newStore(t, b.engine, cfg)
	ctx := context.Background()
	good := inbox.Event{ID: "ok-1", Key: "chat", Payload: []byte(`{"user":"U1"}`)}
	if _, err := store.Append(ctx, good); err != nil {
		t.Fatal(err)
	}
	// Forgeries: no mac, a mac from another key, and a copy of the good entry with its payload changed.
	meta, mac := inbox.SealOf(cfg, good)
	b.forge(t, cfg.Stream, "f-1", "chat", `{"user":"Uapprover"}`, "null", "")
	b.forge(t, cfg.Stream, "f-2", "chat", `{"user":"Uapprover"}`, "null", "AAAA")
	b.forge(t, cfg.Stream, "ok-1", "chat", `{"user":"Uapprover"}`, meta, mac)
	var mu sync.Mutex
	var handled []string
	runConsumer(t, b.engine, cfg, inbox.ConsumerConfig{Name: "c1", Block: 50 * time.Millisecond},
		func(_ context.Context, d inbox.Delivery) error {
			mu.Lock()
			defer mu.Unlock()
			handled = append(handled, string(d.Payload))
			return nil
		})
	waitFor(t, "3 dead letters", func() bool { return dead(t, store) == 3 })
	waitFor(t, "acknowledgement", settled(t, store))
	mu.Lock()
	defer mu.Unlock()
	if len(handled) != 1 || handled[0] != `{"user":"U1"}` {
		t.Fatalf("handled %q, want only the sealed entry", handled)
	}
}

func testMarks(t *testing.T, b *backend) {
	ctx := context.Background()
	m := inbox.NewMarksOn(b.engine, b.prefix+"sent:", time.Minute)
	if done, err := m.Done(ctx, "k"); err != nil || done {
		t.Fatalf("fresh key done=%v err=%v", done, err)
	}
	if err := m.Mark(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if done, err := m.Done(ctx, "k"); err != nil || !done {
		t.Fatalf("marked key done=%v err=%v", done, err)
	}
	if done, err := inbox.NewMarksOn(b.restart(), b.prefix+"sent:", time.Minute).Done(ctx, "k"); err != nil || !done {
		t.Fatalf("after restart done=%v err=%v", done, err)
	}
	if done, err := inbox.NewMarksOn(b.engine, b.prefix+"other:", time.Minute).Done(ctx, "k"); err != nil || done {
		t.Fatalf("another prefix sees the mark: done=%v err=%v", done, err)
	}
	short := inbox.NewMarksOn(b.engine, b.prefix+"short:", 100*time.Millisecond)
	if err := short.Mark(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the mark to expire", func() bool {
		done, err := short.Done(ctx, "k")
		return err == nil && !done
	})
}

func testMetrics(t *testing.T, b *backend) {
	reg := prometheus.NewRegistry()
	m, err := inbox.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(b, "metrics")
	cfg.Metrics = m
	s := newStore(t, b.engine, cfg)
	ctx := context.Background()
	if _, err := s.Append(ctx, inbox.Event{ID: "a", Key: "k"}, inbox.Event{ID: "a", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	runConsumer(t, b.engine, cfg, fastConsumer("c1"), func(context.Context, inbox.Delivery) error { close(done); return nil })
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

func testStreamLagAndWaitMetrics(t *testing.T, b *backend) {
	reg := prometheus.NewRegistry()
	m, err := inbox.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(b, "lag")
	cfg.Metrics = m
	s := newStore(t, b.engine, cfg)
	ctx := context.Background()
	// The group exists (as after a gateway start) but nobody reads: all three entries lag.
	c, err := inbox.NewConsumerOn(b.engine, cfg, fastConsumer("idle"), func(context.Context, inbox.Delivery) error { return nil })
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
	runConsumer(t, b.engine, cfg, fastConsumer("c1"), func(context.Context, inbox.Delivery) error { return nil })
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
