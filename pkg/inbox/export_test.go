package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
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

func (q *failingAckQueue) ack(ctx context.Context, id string) error {
	q.f.mu.Lock()
	if q.f.left > 0 {
		q.f.left--
		q.f.mu.Unlock()
		return errors.New("connection reset by peer")
	}
	q.f.mu.Unlock()
	if err := q.queue.ack(ctx, id); err != nil {
		return err
	}
	q.f.mu.Lock()
	defer q.f.mu.Unlock()
	q.f.acks++
	return nil
}
