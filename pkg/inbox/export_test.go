package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"
)

// SealOf is the meta and the seal Append stores with ev, for tests that forge entries.
func SealOf(cfg Config, ev Event) (meta, mac string) {
	m, _ := json.Marshal(ev.Meta)
	return string(m), cfg.mac(ev.ID, ev.Key, ev.Payload, m)
}

// FailAcks wraps e so that the first n acks (on any queue made from it) fail, as when Redis
// drops the connection between the handler's success and the XACK.
func FailAcks(e Engine, n int) (Engine, func() int) {
	f := &failingAcks{Engine: e, left: n}
	return f, f.acked
}

type failingAcks struct {
	Engine
	mu   sync.Mutex
	left int
	acks int
}

func (f *failingAcks) queue(cfg Config) queue {
	return &failingAckQueue{queue: f.Engine.queue(cfg), f: f}
}

func (f *failingAcks) acked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acks
}

type failingAckQueue struct {
	queue
	f *failingAcks
}

func (q *failingAckQueue) ack(ctx context.Context, consumer, key, id, next string) (turn, error) {
	q.f.mu.Lock()
	if q.f.left > 0 {
		q.f.left--
		q.f.mu.Unlock()
		return turnUnknown, errors.New("connection reset by peer")
	}
	q.f.mu.Unlock()
	t, err := q.queue.ack(ctx, consumer, key, id, next)
	if err != nil {
		return t, err
	}
	q.f.mu.Lock()
	defer q.f.mu.Unlock()
	q.f.acks++
	return t, nil
}

// Queue is the queue of a stream as a consumer drives it, for the contract tests of its steps.
type Queue struct{ q queue }

// QueueOf is the queue of cfg (with its defaults) on e.
func QueueOf(e Engine, cfg Config) Queue {
	cfg.defaults()
	return Queue{q: e.queue(cfg)}
}

// EnsureGroup creates the consumer group.
func (q Queue) EnsureGroup(ctx context.Context) error { return q.q.ensureGroup(ctx) }

// Read hands up to count new entries to consumer and returns their ids.
func (q Queue) Read(ctx context.Context, consumer string, count int64) ([]string, error) {
	es, err := q.q.readNew(ctx, consumer, count, 10*time.Millisecond)
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.id
	}
	return ids, err
}

// Turn is the entry's turn for consumer: "go", "wait" or "lost".
func (q Queue) Turn(ctx context.Context, consumer, key, id string) (string, error) {
	t, err := q.q.turn(ctx, consumer, key, id)
	return t.name(), err
}

// Ack acknowledges the entry id of key and answers next's turn ("unknown" when it did not).
func (q Queue) Ack(ctx context.Context, consumer, key, id, next string) (string, error) {
	t, err := q.q.ack(ctx, consumer, key, id, next)
	return t.name(), err
}

func (t turn) name() string {
	switch t {
	case turnGo:
		return "go"
	case turnWait:
		return "wait"
	case turnLost:
		return "lost"
	}
	return "unknown"
}
