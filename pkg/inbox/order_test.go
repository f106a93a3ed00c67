package inbox_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// orderBackend is one engine under the per-chat order contract (order.go), with what the tests
// need to look behind it.
type orderBackend struct {
	engine inbox.Engine
	prefix string
	// move hands the pending entry id of stream to consumer, as a takeover by it would.
	move func(t *testing.T, stream, id, consumer string)
	// owner is the consumer the entry id of stream is pending with ("" when none).
	owner func(t *testing.T, stream, id string) string
	// leftovers counts the order records of stream still stored.
	leftovers func(t *testing.T, stream string) int64
	// order is what the engine holds as key's outstanding entries of stream, oldest first.
	order func(t *testing.T, stream, key string) []string
}

func cutID(id string) (int64, int64, error) {
	for i := range id {
		if id[i] == '-' {
			ms, err := strconv.ParseInt(id[:i], 10, 64)
			if err != nil {
				return 0, 0, err
			}
			seq, err := strconv.ParseInt(id[i+1:], 10, 64)
			return ms, seq, err
		}
	}
	return 0, 0, fmt.Errorf("bad id %q", id)
}

var orderContract = []struct {
	name string
	run  func(t *testing.T, b *orderBackend)
}{
	{"TwoConsumersKeepEachChatsOrder", testTwoConsumersKeepEachChatsOrder},
	{"LaterEntryWaitsForEarlierOneAtAnotherConsumer", testLaterEntryWaitsForEarlierOneAtAnotherConsumer},
	{"EntryTakenOverIsHandledByItsNewHolderOnly", testEntryTakenOverIsHandledByItsNewHolderOnly},
	{"AckSettlesTheOrderAndAnswersTheNextTurn", testAckSettlesTheOrderAndAnswersTheNextTurn},
}

func runOrderContract(t *testing.T, newBackend func(t *testing.T) *orderBackend) {
	for _, c := range orderContract {
		t.Run(c.name, func(t *testing.T) { c.run(t, newBackend(t)) })
	}
}

// replicaConsumer is a consumer as a gateway replica runs it: claim period long enough that
// machine load never looks like a dead consumer.
func replicaConsumer(name string) inbox.ConsumerConfig {
	c := fastConsumer(name)
	c.ClaimIdle = 5 * time.Second
	c.TurnPoll = 2 * time.Millisecond
	return c
}

// chatLog records, per chat, the order events were handled in, by which consumer, and whether
// two events of one chat were ever handled at the same time (by any consumers).
type chatLog struct {
	mu      sync.Mutex
	active  map[string]int
	overlap []string
	order   map[string][]int
	by      map[string]map[string]int // chat -> consumer -> events
	count   map[string]int            // event id -> times handled
}

func newChatLog() *chatLog {
	return &chatLog{active: map[string]int{}, order: map[string][]int{}, by: map[string]map[string]int{}, count: map[string]int{}}
}

func (l *chatLog) handler(consumer string) inbox.Handler {
	return func(_ context.Context, d inbox.Delivery) error {
		l.mu.Lock()
		l.active[d.Key]++
		if l.active[d.Key] > 1 {
			l.overlap = append(l.overlap, d.ID)
		}
		l.mu.Unlock()
		// A reply takes a moment, and not always the same.
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
		n, _ := strconv.Atoi(string(d.Payload))
		l.mu.Lock()
		defer l.mu.Unlock()
		l.active[d.Key]--
		l.order[d.Key] = append(l.order[d.Key], n)
		if l.by[d.Key] == nil {
			l.by[d.Key] = map[string]int{}
		}
		l.by[d.Key][consumer]++
		l.count[d.ID]++
		return nil
	}
}

func (l *chatLog) handled() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.count)
}

// Two consumers of one group (two gateway replicas) share bursts of 1,000 events over five
// chats: every chat's events are handled in the order they were stored, never two of one chat
// at once, none lost and none twice.
func testTwoConsumersKeepEachChatsOrder(t *testing.T, b *orderBackend) {
	cfg := inbox.Config{Stream: b.prefix + "inbox:order", Group: "g", Seal: testSeal}
	s := newStore(t, b.engine, cfg)
	log := newChatLog()
	runConsumer(t, b.engine, cfg, replicaConsumer("replica-a"), log.handler("replica-a"))
	runConsumer(t, b.engine, cfg, replicaConsumer("replica-b"), log.handler("replica-b"))

	const total, chats = 1000, 5
	next := map[string]int{}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < total; {
		// A burst: up to 20 events of random chats in one webhook.
		var burst []inbox.Event
		for n := 1 + rng.IntN(20); n > 0 && i < total; n-- {
			chat := fmt.Sprint("chat-", rng.IntN(chats))
			burst = append(burst, inbox.Event{ID: fmt.Sprint("ev-", i), Key: chat, Payload: []byte(strconv.Itoa(next[chat]))})
			next[chat]++
			i++
		}
		if _, err := s.Append(context.Background(), burst...); err != nil {
			t.Fatal(err)
		}
	}
	testinfra.Eventually(t, 60*time.Second, "every event handled", func() bool { return log.handled() == total })
	waitFor(t, "acknowledgement", settled(t, s))
	// An entry leaves its chat's order in the same step as its ack.
	if n := b.leftovers(t, cfg.Stream); n != 0 {
		t.Fatalf("%d order records left after every ack", n)
	}

	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.overlap) > 0 {
		t.Errorf("%d events ran while another event of their chat was running: %v", len(log.overlap), log.overlap[:min(5, len(log.overlap))])
	}
	for id, n := range log.count {
		if n != 1 {
			t.Errorf("event %s handled %d times", id, n)
		}
	}
	shared := 0
	for chat, got := range log.order {
		if len(got) != next[chat] {
			t.Errorf("chat %s: %d events handled, %d stored", chat, len(got), next[chat])
		}
		for i, n := range got {
			if n != i {
				t.Errorf("chat %s: position %d holds event %d; order %v", chat, i, n, got[:min(len(got), i+5)])
				break
			}
		}
		if len(log.by[chat]) == 2 {
			shared++
		}
	}
	// The test means something only when the replicas really split the chats' events.
	if shared == 0 {
		t.Fatalf("no chat was handled by both consumers: %v", log.by)
	}
	if n := dead(t, s); n != 0 {
		t.Fatalf("dead letters = %d", n)
	}
}

// A chat's second event, read by another consumer while the first is still being handled, waits
// for the first one to finish.
func testLaterEntryWaitsForEarlierOneAtAnotherConsumer(t *testing.T, b *orderBackend) {
	cfg := inbox.Config{Stream: b.prefix + "inbox:wait", Group: "g", Seal: testSeal}
	s := newStore(t, b.engine, cfg)
	ctx := context.Background()
	if _, err := s.Append(ctx, inbox.Event{ID: "first", Key: "chat"}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	record := func(id string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, id)
	}
	started, release := make(chan struct{}), make(chan struct{})
	// One entry in hand at most: the first consumer cannot read the second event.
	one := replicaConsumer("replica-a")
	one.Batch, one.MaxInFlight = 1, 1
	runConsumer(t, b.engine, cfg, one, func(_ context.Context, d inbox.Delivery) error {
		close(started)
		<-release
		record(d.ID)
		return nil
	})
	<-started
	if _, err := s.Append(ctx, inbox.Event{ID: "second", Key: "chat"}); err != nil {
		t.Fatal(err)
	}
	secondDone := make(chan struct{})
	runConsumer(t, b.engine, cfg, replicaConsumer("replica-b"), func(_ context.Context, d inbox.Delivery) error {
		record(d.ID)
		close(secondDone)
		return nil
	})
	waitFor(t, "the second event delivered to the other consumer", func() bool {
		st := stats(t, s)
		return st.Pending == 2 && st.Lag == 0
	})
	// Many turns of the waiting consumer pass while the first event is still in hand.
	select {
	case <-secondDone:
		t.Fatal("the second event of the chat was handled while the first was still running")
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	<-secondDone
	waitFor(t, "acknowledgement", settled(t, s))
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(order) != "[first second]" {
		t.Fatalf("order = %v", order)
	}
}

// An entry taken over by another consumer while it waited in a lane is dropped by its former
// holder — neither handled nor taken back by the keep-alive — and handled once, by the new
// holder, after the chat's earlier entry.
func testEntryTakenOverIsHandledByItsNewHolderOnly(t *testing.T, b *orderBackend) {
	cfg := inbox.Config{Stream: b.prefix + "inbox:fence", Group: "g", Seal: testSeal}
	s := newStore(t, b.engine, cfg)
	ctx := context.Background()
	res, err := s.Append(ctx, inbox.Event{ID: "first", Key: "chat"}, inbox.Event{ID: "second", Key: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	second := res.StreamIDs[1]
	var mu sync.Mutex
	var handled []string
	started, release := make(chan struct{}), make(chan struct{})
	// A keep-alive every second; nothing is reclaimed before it is idle for 3 s.
	a := fastConsumer("replica-a")
	a.ClaimIdle = 3 * time.Second
	a.TurnPoll = 2 * time.Millisecond
	stopA := runConsumer(t, b.engine, cfg, a, func(_ context.Context, d inbox.Delivery) error {
		if d.ID == "first" {
			close(started)
			<-release
		}
		mu.Lock()
		defer mu.Unlock()
		handled = append(handled, "a:"+d.ID)
		return nil
	})
	<-started
	waitFor(t, "both events in the first consumer's hands", func() bool { return stats(t, s).Pending == 2 })
	b.move(t, cfg.Stream, second, "replica-b")
	// A keep-alive of the first consumer passes while it holds both events in hand.
	time.Sleep(1500 * time.Millisecond)
	if o := b.owner(t, cfg.Stream, second); o != "replica-b" {
		t.Fatalf("the keep-alive took the entry back: pending with %q", o)
	}
	close(release)
	waitFor(t, "the first event acknowledged", func() bool { return stats(t, s).Pending == 1 })
	stopA()
	runConsumer(t, b.engine, cfg, replicaConsumer("replica-b"), func(_ context.Context, d inbox.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		handled = append(handled, "b:"+d.ID)
		return nil
	})
	waitFor(t, "acknowledgement", settled(t, s))
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(handled) != "[a:first b:second]" {
		t.Fatalf("handled = %v, want the first event by a, the second by b only", handled)
	}
}

// An ack ends the entry and takes it out of its chat's order in the same step, never an entry
// still pending; asked for the chat's next entry, it answers that entry's turn as a turn right
// after the ack would: go once nothing earlier is pending, wait while an earlier entry is
// pending with anyone, lost when another consumer holds it.
func testAckSettlesTheOrderAndAnswersTheNextTurn(t *testing.T, b *orderBackend) {
	cfg := inbox.Config{Stream: b.prefix + "inbox:ack", Group: "g", Seal: testSeal}
	s := newStore(t, b.engine, cfg)
	q := inbox.QueueOf(b.engine, cfg)
	ctx := context.Background()
	var events []inbox.Event
	for i := 1; i <= 6; i++ {
		events = append(events, inbox.Event{ID: fmt.Sprint("e", i), Key: "chat"})
	}
	events = append(events, inbox.Event{ID: "o1", Key: "other"})
	res, err := s.Append(ctx, events...)
	if err != nil {
		t.Fatal(err)
	}
	e := res.StreamIDs // e[0..5]: the chat's entries; e[6]: the other chat's
	if err := q.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	if ids, err := q.Read(ctx, "c1", 100); err != nil || len(ids) != 7 {
		t.Fatalf("read %v, %v", ids, err)
	}
	expect := func(step, got string, err error, want string) {
		t.Helper()
		if err != nil || got != want {
			t.Fatalf("%s: %q, %v; want %q", step, got, err, want)
		}
	}
	expectOrder := func(step string, want ...string) {
		t.Helper()
		if got := b.order(t, cfg.Stream, "chat"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: the chat's order is %v, want %v", step, got, want)
		}
	}
	expectPending := func(step string, want int64) {
		t.Helper()
		if got := stats(t, s).Pending; got != want {
			t.Fatalf("%s: %d pending, want %d", step, got, want)
		}
	}
	expectOrder("after the read", e[:6]...)
	turn, err := q.Turn(ctx, "c1", "chat", e[0])
	expect("turn of the chat's first entry", turn, err, "go")
	turn, err = q.Turn(ctx, "c1", "chat", e[1])
	expect("turn of the second entry", turn, err, "wait")

	turn, err = q.Ack(ctx, "c1", "chat", e[0], e[1])
	expect("ack of the first entry, asking for the second", turn, err, "go")
	expectPending("after the first ack", 6)
	expectOrder("after the first ack", e[1:6]...)
	turn, err = q.Turn(ctx, "c1", "chat", e[1])
	expect("turn of the second entry after the ack", turn, err, "go")

	// The third entry is with another consumer now: the ack of the second says so.
	b.move(t, cfg.Stream, e[2], "c2")
	turn, err = q.Ack(ctx, "c1", "chat", e[1], e[3])
	expect("ack of the second entry, asking for the fourth", turn, err, "wait")
	turn, err = q.Ack(ctx, "c1", "chat", e[4], e[2])
	expect("ack of the fifth entry, asking for the third (held by c2)", turn, err, "lost")
	// Acknowledged out of order (as a dead letter can be): the earlier entries still pending
	// stay in the order, so the fourth entry still waits for the third.
	expectPending("after three acks", 4)
	expectOrder("after three acks", e[2], e[3], e[5])
	turn, err = q.Turn(ctx, "c1", "chat", e[3])
	expect("turn of the fourth entry while c2 holds the third", turn, err, "wait")

	turn, err = q.Ack(ctx, "c2", "chat", e[2], "")
	expect("ack without a next entry", turn, err, "unknown")
	expectOrder("after c2's ack", e[3], e[5])
	turn, err = q.Turn(ctx, "c1", "chat", e[3])
	expect("turn of the fourth entry once the third is done", turn, err, "go")
	turn, err = q.Ack(ctx, "c1", "chat", e[3], e[5])
	expect("ack of the fourth, asking for the sixth", turn, err, "go")
	turn, err = q.Ack(ctx, "c1", "chat", e[5], "")
	expect("ack of the last entry", turn, err, "unknown")
	expectOrder("after the chat's last ack")

	// An entry acknowledged without its key (trimmed away while pending) leaves its id in the
	// order: the next turn of the chat drops it.
	turn, err = q.Ack(ctx, "c1", "", e[6], "")
	expect("ack without a key", turn, err, "unknown")
	expectPending("after every ack", 0)
	res, err = s.Append(ctx, inbox.Event{ID: "o2", Key: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if ids, err := q.Read(ctx, "c1", 100); err != nil || len(ids) != 1 {
		t.Fatalf("read %v, %v", ids, err)
	}
	turn, err = q.Turn(ctx, "c1", "other", res.StreamIDs[0])
	expect("turn after an ack without a key", turn, err, "go")
	if got := b.order(t, cfg.Stream, "other"); fmt.Sprint(got) != fmt.Sprint(res.StreamIDs) {
		t.Fatalf("the other chat's order is %v, want %v", got, res.StreamIDs)
	}
	turn, err = q.Ack(ctx, "c1", "other", res.StreamIDs[0], "")
	expect("ack of the other chat's entry", turn, err, "unknown")
	if n := b.leftovers(t, cfg.Stream); n != 0 {
		t.Fatalf("%d order records left after every ack", n)
	}
}
