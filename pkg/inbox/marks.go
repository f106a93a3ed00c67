package inbox

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Marks remembers which outbound deliveries already succeeded, for channels whose API has no
// idempotency key of its own (Slack): a retried send checks its key first and skips what went out.
type Marks struct {
	rdb    redis.UniversalClient
	prefix string
	ttl    time.Duration
}

// NewMarks keeps marks under prefix for ttl (default 24 h).
func NewMarks(rdb redis.UniversalClient, prefix string, ttl time.Duration) *Marks {
	if ttl <= 0 {
		ttl = 24 * time.Hour
	}
	return &Marks{rdb: rdb, prefix: prefix, ttl: ttl}
}

// Done reports whether key was marked.
func (m *Marks) Done(ctx context.Context, key string) (bool, error) {
	err := m.rdb.Get(ctx, m.prefix+key).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, err
}

// Mark records key as delivered.
func (m *Marks) Mark(ctx context.Context, key string) error {
	return m.rdb.Set(ctx, m.prefix+key, "1", m.ttl).Err()
}
