package inbox

import (
	"context"
	"time"
)

// Marks remembers which outbound deliveries already succeeded, for channels whose API has no
// idempotency key of its own (Slack): a retried send checks its key first and skips what went out.
type Marks struct {
	m marker
}

// NewMarksOn keeps marks under prefix for ttl (default 24 h) on the engine e.
func NewMarksOn(e Engine, prefix string, ttl time.Duration) *Marks {
	if ttl <= 0 {
		ttl = 24 * time.Hour
	}
	return &Marks{m: e.marks(prefix, ttl)}
}

// Done reports whether key was marked.
func (m *Marks) Done(ctx context.Context, key string) (bool, error) { return m.m.done(ctx, key) }

// Mark records key as delivered.
func (m *Marks) Mark(ctx context.Context, key string) error { return m.m.mark(ctx, key) }
