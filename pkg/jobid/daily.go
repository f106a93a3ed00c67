package jobid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Allocator hands out JobIDs; chat-mio and the gateways allocate from one shared counter.
type Allocator interface {
	Next(ctx context.Context) (string, error)
}

// Counter is the per-day counter behind a Daily allocator, kept by a state engine
// (jobid/redisalloc, jobid/sqlitealloc). Incr takes the day's next n numbers (n ≥ 1) and returns
// the last of them: the caller's are last-n+1 … last. A day's numbers start at 1; its counter
// lives CounterTTL from its first number, then starts again at 1.
type Counter interface {
	Incr(ctx context.Context, day string, n int64) (last int64, err error)
}

// Seeder is a Counter that can tell a missing day's counter (lost in a flush or a crash of its
// engine) from a live one, and hold it above a floor. IncrIfPresent never creates the counter:
// it reports present=false instead. Seed starts a missing counter at floor and raises a live one
// that is below it (restored from an older snapshot), never lowering it, so the next Incr
// returns more than floor.
type Seeder interface {
	IncrIfPresent(ctx context.Context, day string, n int64) (last int64, present bool, err error)
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

	mu sync.Mutex
	// raised is the day whose counter this allocator has held above the floor.
	raised string
}

var _ Allocator = (*Daily)(nil)

// Option configures a Daily allocator.
type Option func(*Daily)

// WithClock replaces time.Now (tests cross the day boundary with it).
func WithClock(now func() time.Time) Option { return func(d *Daily) { d.now = now } }

// WithFloor makes a Daily whose counter is a Seeder hold the day's counter above floor: its
// first allocation of a day (after a start, too) raises the counter to the floor if it is below
// (a counter restored from an older snapshot), and a missing counter (a new day, or lost) starts
// above it. No number already handed out is handed out again. Without an answer from floor a
// live counter is used as it is, and a missing one gives the fallback form, which is unique too.
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
	day := d.today()
	id, err := d.counted(ctx, day)
	if err == nil {
		return id, nil
	}
	var b [4]byte
	if _, rerr := rand.Read(b[:]); rerr != nil {
		return "", fmt.Errorf("allocate job id: counter: %w; random: %w", err, rerr)
	}
	id = fmt.Sprintf("job_%s_%s", day, hex.EncodeToString(b[:]))
	d.log.WarnContext(ctx, "jobid.fallback", slog.String("job_id", id), slog.String("reason", err.Error()))
	return id, nil
}

// today is the current day in the allocator's zone, as ids spell it.
func (d *Daily) today() string { return d.now().In(d.loc).Format("20060102") }

// counted draws day's next id from the counter (never the fallback form).
func (d *Daily) counted(ctx context.Context, day string) (string, error) {
	n, err := d.incr(ctx, day, 1)
	if err != nil {
		return "", err
	}
	return format(day, n), nil
}

// format spells the id numbered n of day.
func format(day string, n int64) string { return fmt.Sprintf("job_%s_%03d", day, n) }

// incr draws the day's next n numbers and returns the last; with a floor and a Seeder, the
// day's first draw of this allocator raises the counter to the floor, and a missing counter is
// first started above it.
func (d *Daily) incr(ctx context.Context, day string, n int64) (int64, error) {
	seeder, ok := d.counter.(Seeder)
	if d.floor == nil || !ok {
		return d.counter.Incr(ctx, day, n)
	}
	d.mu.Lock()
	raised := d.raised == day
	d.mu.Unlock()
	if !raised {
		if floor, err := d.floor(ctx, day); err == nil {
			if err := seeder.Seed(ctx, day, floor); err != nil {
				return 0, err
			}
			d.mu.Lock()
			d.raised = day
			d.mu.Unlock()
			return d.counter.Incr(ctx, day, n)
		}
	}
	last, present, err := seeder.IncrIfPresent(ctx, day, n)
	if err != nil || present {
		return last, err
	}
	floor, err := d.floor(ctx, day)
	if err != nil {
		return 0, fmt.Errorf("the counter of %s is missing and its floor is unknown: %w", day, err)
	}
	if err := seeder.Seed(ctx, day, floor); err != nil {
		return 0, err
	}
	d.log.InfoContext(ctx, "jobid.counter_seeded", slog.String("day", day), slog.Int64("floor", floor))
	return d.counter.Incr(ctx, day, n)
}
