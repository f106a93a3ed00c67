// Package redisalloc allocates JobIDs (SPEC §3) from a per-day Redis counter shared by the
// services that start jobs (the gateways and chat-mio), with a random fallback when Redis is
// down.
package redisalloc

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// counter keeps the per-day counters in Redis keys <prefix>jobid:<day>.
type counter struct {
	rdb    redis.Cmdable
	prefix string
}

var _ jobid.Counter = (*counter)(nil)

// Option configures the allocator.
type Option = jobid.Option

// WithClock replaces time.Now (tests cross the day boundary with it).
func WithClock(now func() time.Time) Option { return jobid.WithClock(now) }

// WithLogger sets the logger used to report the fallback.
func WithLogger(l *slog.Logger) Option { return jobid.WithLogger(l) }

// New returns an allocator on Redis; keyPrefix namespaces its keys.
func New(rdb redis.Cmdable, loc *time.Location, keyPrefix string, opts ...Option) *jobid.Daily {
	return jobid.NewDaily(&counter{rdb: rdb, prefix: keyPrefix}, loc, opts...)
}

// key is the Redis key of day's counter.
func (c *counter) key(day string) string { return c.prefix + "jobid:" + day }

// Incr implements jobid.Counter: INCRBY, and the key's lifetime set by its first number.
func (c *counter) Incr(ctx context.Context, day string, n int64) (int64, error) {
	key := c.key(day)
	var incr *redis.IntCmd
	_, err := c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.IncrBy(ctx, key, n)
		p.ExpireNX(ctx, key, jobid.CounterTTL)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return incr.Val(), nil
}

// incrIfPresent adds ARGV[1] to a counter that exists; a missing one is reported, not created.
var incrIfPresent = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('INCRBY', KEYS[1], ARGV[1])
end
return -1
`)

// IncrIfPresent implements jobid.Seeder.
func (c *counter) IncrIfPresent(ctx context.Context, day string, n int64) (int64, bool, error) {
	last, err := incrIfPresent.Run(ctx, c.rdb, []string{c.key(day)}, n).Int64()
	if err != nil {
		return 0, false, err
	}
	return last, last >= 0, nil
}

// seed starts a missing counter at the floor (with the counter's lifetime) and raises a lower
// one to it, keeping its lifetime; a higher one is left alone.
var seed = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
elseif tonumber(v) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
end
return 0
`)

// Seed implements jobid.Seeder.
func (c *counter) Seed(ctx context.Context, day string, floor int64) error {
	return seed.Run(ctx, c.rdb, []string{c.key(day)}, floor, jobid.CounterTTL.Milliseconds()).Err()
}
