package app

import (
	"sync"

	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
)

// subscriberBuffer bounds how far a watcher may lag before it is cut off.
const subscriberBuffer = 256

// Broker fans state changes out to watchers.
type Broker struct {
	mu   sync.Mutex
	subs map[chan domain.Change]struct{}
}

// NewBroker returns a broker without subscribers.
func NewBroker() *Broker { return &Broker{subs: map[chan domain.Change]struct{}{}} }

// Subscribe returns a channel of changes and a cancel func that ends the subscription.
func (b *Broker) Subscribe() (<-chan domain.Change, func()) {
	ch := make(chan domain.Change, subscriberBuffer)
	b.mu.Lock()
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() { b.drop(ch) }
}

func (b *Broker) drop(ch chan domain.Change) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.subs[ch]; ok {
		delete(b.subs, ch)
		close(ch)
	}
}

// Publish never blocks: a watcher whose buffer is full is dropped (its channel closes).
func (b *Broker) Publish(c domain.Change) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- c:
		default:
			delete(b.subs, ch)
			close(ch)
		}
	}
}
