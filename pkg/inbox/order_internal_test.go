package inbox

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingTurns counts the turn calls of a queue; after, when set, runs after each.
type countingTurns struct {
	queue
	n     atomic.Int64
	after func()
}

func (q *countingTurns) turn(ctx context.Context, consumer, key, id string) (turn, error) {
	q.n.Add(1)
	t, err := q.queue.turn(ctx, consumer, key, id)
	if q.after != nil {
		q.after()
	}
	return t, err
}

// A lane asks the engine for the turn of its first entry only: each ack answers the next one.
// That answer holds for the lane's next look alone, and only for the entry it was given for: an
// older entry put ahead of it meanwhile (a reclaim) is asked for, and the answer is dropped.
func TestAckAnswersTheLanesNextTurn(t *testing.T) {
	forEachEngine(t, ackAnswersTheLanesNextTurn)
}

func ackAnswersTheLanesNextTurn(t *testing.T, newStore storeForTest) {
	ctx := context.Background()
	e, cfg, s := newStore(t, "inbox:lane")
	if _, err := s.Append(ctx, Event{ID: "e1", Key: "chat"}, Event{ID: "e2", Key: "chat"}, Event{ID: "e3", Key: "chat"}); err != nil {
		t.Fatal(err)
	}
	var handled []string
	c, err := NewConsumerOn(e, cfg, ConsumerConfig{Name: "c1", TurnPoll: time.Millisecond}, func(_ context.Context, d Delivery) error {
		handled = append(handled, d.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	q := &countingTurns{queue: c.q}
	c.q = q
	if err := c.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	es, err := q.readNew(ctx, "c1", 10, 0)
	if err != nil || len(es) != 3 {
		t.Fatalf("read %d entries, %v", len(es), err)
	}
	ds := make([]Delivery, len(es))
	for i, e := range es {
		ds[i] = e.delivery(false)
	}
	// The second entry is held back: it comes into the lane later, as a reclaimed entry does.
	l := &lane{queue: []Delivery{ds[0], ds[2]}}
	next := func(want string, turns int64) Delivery {
		t.Helper()
		d, ok := c.awaitTurn(ctx, l)
		if !ok || d.ID != want || q.n.Load() != turns {
			t.Fatalf("took %q (%v) after %d turn calls, want %s after %d", d.ID, ok, q.n.Load(), want, turns)
		}
		return d
	}
	c.process(ctx, l, next("e1", 1))
	if l.knownID != ds[2].StreamID || l.known != turnWait {
		t.Fatalf("after the first ack the lane knows %q: %v, want e3 to wait for e2", l.knownID, l.known)
	}
	l.queue = slices.Insert(l.queue, 0, ds[1])
	d := next("e2", 2)
	if l.knownID != "" {
		t.Fatalf("the answer for %s outlived the lane's look", l.knownID)
	}
	c.process(ctx, l, d)
	c.process(ctx, l, next("e3", 2))
	if fmt.Sprint(handled) != "[e1 e2 e3]" {
		t.Fatalf("handled %v", handled)
	}
	if st, err := s.Stats(ctx); err != nil || st.Pending != 0 {
		t.Fatalf("stats %+v, %v", st, err)
	}

	// An answer for another entry is never taken for the head's: here the head must wait for
	// an earlier entry pending with another consumer, whatever the lane was told about e5.
	if _, err := s.Append(ctx, Event{ID: "e4", Key: "chat"}, Event{ID: "e5", Key: "chat"}); err != nil {
		t.Fatal(err)
	}
	es, err = q.readNew(ctx, "c1", 10, 0)
	if err != nil || len(es) != 2 {
		t.Fatalf("read %d entries, %v", len(es), err)
	}
	if _, _, err := q.claimIdle(ctx, "c2", 0, "", 1); err != nil { // e4 goes to c2
		t.Fatal(err)
	}
	l = &lane{queue: []Delivery{es[1].delivery(false)}, knownID: es[0].id, known: turnGo}
	lookCtx, stop := context.WithCancel(ctx)
	defer stop()
	q.after = stop // the first look is the one that matters
	calls := q.n.Load()
	if d, ok := c.awaitTurn(lookCtx, l); ok || q.n.Load() != calls+1 {
		t.Fatalf("took %q (%v) after %d turn calls, want it to ask and wait", d.ID, ok, q.n.Load()-calls)
	}
}

// askedTurns records which entries a queue was asked the turn of.
type askedTurns struct {
	queue
	mu    sync.Mutex
	asked []string
}

func (q *askedTurns) turn(ctx context.Context, consumer, key, id string) (turn, error) {
	q.mu.Lock()
	q.asked = append(q.asked, id)
	q.mu.Unlock()
	return q.queue.turn(ctx, consumer, key, id)
}

func (q *askedTurns) ids() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.asked)
}

// An engine tells an entry's turn as it delivers it: the first entry of a chat with nothing
// earlier outstanding goes without asking (SQLite reads it at delivery, Redis marked it when it
// was appended); a later entry of the same chat in the same read, and one whose chat has an
// earlier entry pending with another consumer, are asked for.
func TestDeliveryAnswersTheFirstTurn(t *testing.T) {
	forEachEngine(t, deliveryAnswersTheFirstTurn)
}

func deliveryAnswersTheFirstTurn(t *testing.T, newStore storeForTest) {
	ctx := context.Background()
	e, cfg, s := newStore(t, "inbox:delivered")
	handled := make(chan string, 4)
	c, err := NewConsumerOn(e, cfg, ConsumerConfig{Name: "c1", TurnPoll: time.Millisecond}, func(_ context.Context, d Delivery) error {
		handled <- d.ID
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	q := &askedTurns{queue: c.q}
	c.q = q
	if err := c.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	// b1 goes to c2 and stays pending there.
	if _, err := s.Append(ctx, Event{ID: "b1", Key: "b"}); err != nil {
		t.Fatal(err)
	}
	b1, err := q.readNew(ctx, "c2", 10, 0)
	if err != nil || len(b1) != 1 {
		t.Fatalf("c2 read %d entries, %v", len(b1), err)
	}
	if _, err := s.Append(ctx, Event{ID: "a1", Key: "a"}, Event{ID: "a2", Key: "a"}, Event{ID: "b2", Key: "b"}, Event{ID: "c1", Key: "c"}); err != nil {
		t.Fatal(err)
	}
	es, err := q.readNew(ctx, "c1", 10, 0)
	if err != nil || len(es) != 4 {
		t.Fatalf("read %d entries, %v", len(es), err)
	}
	var goes []string
	for _, e := range es {
		if e.goAtDelivery {
			goes = append(goes, e.eventID)
		}
	}
	if fmt.Sprint(goes) != "[a1 c1]" {
		t.Fatalf("go at delivery: %v, want [a1 c1]", goes)
	}

	// Dispatched, the lanes of a and c take their entries without asking (a2's turn comes with
	// a1's ack); only the lane of b asks, until b1 is acknowledged.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	// Every processing slot is held while the entries are dispatched, so a2 is in its lane before
	// a1 is handled and acknowledged (whose ack then answers a2's turn), however the goroutines run.
	for range cap(c.slots) {
		c.slots <- struct{}{}
	}
	for _, e := range es {
		c.dispatch(runCtx, &wg, e, false)
	}
	for range cap(c.slots) {
		<-c.slots
	}
	got := map[string]bool{}
	for range 3 {
		got[<-handled] = true
	}
	if !got["a1"] || !got["a2"] || !got["c1"] {
		t.Fatalf("handled %v before b1 was acknowledged", got)
	}
	if _, err := q.ack(ctx, "c2", "b", b1[0].id, ""); err != nil {
		t.Fatal(err)
	}
	if id := <-handled; id != "b2" {
		t.Fatalf("handled %q, want b2", id)
	}
	cancel()
	wg.Wait()
	if ids := q.ids(); len(ids) == 0 || slices.ContainsFunc(ids, func(id string) bool { return id != es[2].id }) {
		t.Fatalf("turns asked for %v, want b2's (%s) alone", ids, es[2].id)
	}
}

// storeForTest makes a store of stream (group "g") on an engine of the test's own.
type storeForTest func(t *testing.T, stream string) (Engine, Config, *Store)

// testEngines are the engines this build has, by name (each engine's internal test file adds
// its own).
var testEngines = map[string]storeForTest{}

// forEachEngine runs test on every engine of this build.
func forEachEngine(t *testing.T, test func(t *testing.T, newStore storeForTest)) {
	if len(testEngines) == 0 {
		t.Fatal("no engine in this build")
	}
	for name, newStore := range testEngines {
		t.Run(name, func(t *testing.T) { test(t, newStore) })
	}
}

// Only an entry's first delivery tells its turn: the same entry taken over by another consumer,
// or read again from a consumer's own pending entries (after a restart), is asked for.
func TestOnlyTheFirstDeliveryAnswersTheTurn(t *testing.T) {
	forEachEngine(t, func(t *testing.T, newStore storeForTest) {
		ctx := context.Background()
		e, cfg, s := newStore(t, "inbox:first")
		q := e.queue(cfg)
		if err := q.ensureGroup(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, Event{ID: "x1", Key: "x"}); err != nil {
			t.Fatal(err)
		}
		first, err := q.readNew(ctx, "c1", 10, 0)
		if err != nil || len(first) != 1 || !first[0].goAtDelivery {
			t.Fatalf("first delivery %+v, %v; want x1, go", first, err)
		}
		taken, _, err := q.claimIdle(ctx, "c2", 0, "", 10)
		if err != nil || len(taken) != 1 || taken[0].goAtDelivery {
			t.Fatalf("taken over %+v, %v; want x1, to be asked", taken, err)
		}
		own, err := q.readOwn(ctx, "c2", "0", 10)
		if err != nil || len(own) != 1 || own[0].goAtDelivery {
			t.Fatalf("read again %+v, %v; want x1, to be asked", own, err)
		}
	})
}
