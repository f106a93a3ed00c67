// Package redisalloc allocates JobIDs (SPEC §3) from a per-day Redis counter shared by the
// services that start jobs (the gateways and chat-mio), with a random fallback when Redis is
// down.
package redisalloc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// Allocator hands out job_YYYYMMDD_NNN ids from a per-day Redis counter.
type Allocator struct {
	rdb    redis.Cmdable
	loc    *time.Location
	prefix string
	log    *slog.Logger
	now    func() time.Time
}

// Option configures an Allocator.
type Option func(*Allocator)

// WithClock replaces time.Now (tests cross the day boundary with it).
func WithClock(now func() time.Time) Option { return func(a *Allocator) { a.now = now } }

// WithLogger sets the logger used to report the fallback.
func WithLogger(l *slog.Logger) Option { return func(a *Allocator) { a.log = l } }

// counterTTL keeps yesterday's counter a little while after the day ends, then lets Redis drop it.
const counterTTL = 48 * time.Hour

// New returns an allocator; keyPrefix namespaces its Redis keys.
func New(rdb redis.Cmdable, loc *time.Location, keyPrefix string, opts ...Option) *Allocator {
	a := &Allocator{rdb: rdb, loc: loc, prefix: keyPrefix, log: slog.New(slog.DiscardHandler), now: time.Now}
	for _, o := range opts {
		o(a)
	}
	return a
}

// Next allocates the next JobID. When Redis cannot be reached it returns the fallback form
// job_YYYYMMDD_<8 hex> and logs jobid.fallback; it only fails if no randomness is available.
func (a *Allocator) Next(ctx context.Context) (string, error) {
	day := a.now().In(a.loc).Format("20060102")
	key := a.prefix + "jobid:" + day
	var incr *redis.IntCmd
	_, err := a.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, key)
		p.ExpireNX(ctx, key, counterTTL)
		return nil
	})
	if err == nil {
		return fmt.Sprintf("job_%s_%03d", day, incr.Val()), nil
	}
	var b [4]byte
	if _, rerr := rand.Read(b[:]); rerr != nil {
		return "", fmt.Errorf("allocate job id: redis: %w; random: %w", err, rerr)
	}
	id := fmt.Sprintf("job_%s_%s", day, hex.EncodeToString(b[:]))
	a.log.WarnContext(ctx, "jobid.fallback", slog.String("job_id", id), slog.String("reason", err.Error()))
	return id, nil
}
