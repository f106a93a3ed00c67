package jobid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"
)

// Allocator hands out JobIDs; chat-mio and the gateways allocate from one shared counter.
type Allocator interface {
	Next(ctx context.Context) (string, error)
}

// Counter is the per-day counter behind a Daily allocator, kept by a state engine
// (jobid/redisalloc, jobid/sqlitealloc). Incr returns the day's next number, starting at 1; a
// day's counter lives CounterTTL from its first number, then starts again at 1.
type Counter interface {
	Incr(ctx context.Context, day string) (int64, error)
}

// Seeder is a Counter that can tell a missing day's counter (lost in a flush or a crash of its
// engine) from a live one, and start it above a floor. Incr of a Seeder never creates the
// counter: IncrIfPresent reports present=false instead, and Seed starts it (if nobody did
// meanwhile) at floor, so the next Incr returns floor+1.
type Seeder interface {
	IncrIfPresent(ctx context.Context, day string) (n int64, present bool, err error)
	Seed(ctx context.Context, day string, floor int64) error
}

// Floor says where the day's ids already handed out end (the audit store's highest number).
type Floor func(ctx context.Context, day string) (int64, error)

// CounterTTL keeps yesterday's counter a little while after the day ends, then lets the engine
// drop it.
const CounterTTL = 48 * time.Hour

// Daily hands out job_YYYYMMDD_NNN ids from a per-day Counter, the day taken in a configured
// time zone.
type Daily struct {
	counter Counter
	floor   Floor
	loc     *time.Location
	log     *slog.Logger
	now     func() time.Time
}

var _ Allocator = (*Daily)(nil)

// Option configures a Daily allocator.
type Option func(*Daily)

// WithClock replaces time.Now (tests cross the day boundary with it).
func WithClock(now func() time.Time) Option { return func(d *Daily) { d.now = now } }

// WithFloor makes a Daily whose counter is a Seeder start a missing day's counter above floor:
// the first number of a day, or of a day whose counter was lost, is never one already handed
// out. Without an answer from floor the fallback form is used, which is unique too.
func WithFloor(f Floor) Option { return func(d *Daily) { d.floor = f } }

// WithLogger sets the logger used to report the fallback.
func WithLogger(l *slog.Logger) Option { return func(d *Daily) { d.log = l } }

// NewDaily returns an allocator counting in c, with days in loc.
func NewDaily(c Counter, loc *time.Location, opts ...Option) *Daily {
	d := &Daily{counter: c, loc: loc, log: slog.New(slog.DiscardHandler), now: time.Now}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Next allocates the next JobID. When the counter cannot be reached it returns the fallback form
// job_YYYYMMDD_<8 hex> and logs jobid.fallback; it only fails if no randomness is available.
func (d *Daily) Next(ctx context.Context) (string, error) {
	day := d.now().In(d.loc).Format("20060102")
	n, err := d.incr(ctx, day)
	if err == nil {
		return fmt.Sprintf("job_%s_%03d", day, n), nil
	}
	var b [4]byte
	if _, rerr := rand.Read(b[:]); rerr != nil {
		return "", fmt.Errorf("allocate job id: counter: %w; random: %w", err, rerr)
	}
	id := fmt.Sprintf("job_%s_%s", day, hex.EncodeToString(b[:]))
	d.log.WarnContext(ctx, "jobid.fallback", slog.String("job_id", id), slog.String("reason", err.Error()))
	return id, nil
}

// incr draws the day's next number; with a floor and a Seeder, a missing counter is first
// started above the floor.
func (d *Daily) incr(ctx context.Context, day string) (int64, error) {
	seeder, ok := d.counter.(Seeder)
	if d.floor == nil || !ok {
		return d.counter.Incr(ctx, day)
	}
	n, present, err := seeder.IncrIfPresent(ctx, day)
	if err != nil || present {
		return n, err
	}
	floor, err := d.floor(ctx, day)
	if err != nil {
		return 0, fmt.Errorf("the counter of %s is missing and its floor is unknown: %w", day, err)
	}
	if err := seeder.Seed(ctx, day, floor); err != nil {
		return 0, err
	}
	d.log.InfoContext(ctx, "jobid.counter_seeded", slog.String("day", day), slog.Int64("floor", floor))
	return d.counter.Incr(ctx, day)
}
