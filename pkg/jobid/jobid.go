// Package jobid allocates JobIDs (SPEC §3) and carries them in OpenTelemetry baggage.
package jobid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/baggage"
)

// BaggageKey is the W3C baggage member that carries the JobID across services.
const BaggageKey = "job_id"

// ErrInvalid is returned for text that is not a JobID.
var ErrInvalid = errors.New("invalid job id")

var pattern = regexp.MustCompile(`^job_[0-9]{8}_(?:[0-9]{3,}|[0-9a-f]{8})$`)

// Normalize accepts a user-typed JobID case-insensitively and with surrounding whitespace and
// returns its canonical form.
func Normalize(s string) (string, error) {
	id := strings.ToLower(strings.TrimSpace(s))
	if !pattern.MatchString(id) {
		return "", fmt.Errorf("%w: %q (expected job_YYYYMMDD_NNN)", ErrInvalid, strings.TrimSpace(s))
	}
	return id, nil
}

// Valid reports whether s is a canonical JobID.
func Valid(s string) bool { return pattern.MatchString(s) }

// WithJobID returns ctx whose baggage carries id. An id that baggage cannot carry is ignored.
func WithJobID(ctx context.Context, id string) context.Context {
	m, err := baggage.NewMemberRaw(BaggageKey, id)
	if err != nil {
		return ctx
	}
	b, err := baggage.FromContext(ctx).SetMember(m)
	if err != nil {
		return ctx
	}
	return baggage.ContextWithBaggage(ctx, b)
}

// FromContext returns the JobID in ctx's baggage, or "".
func FromContext(ctx context.Context) string {
	return baggage.FromContext(ctx).Member(BaggageKey).Value()
}

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

// NewAllocator returns an allocator; keyPrefix namespaces its Redis keys.
func NewAllocator(rdb redis.Cmdable, loc *time.Location, keyPrefix string, opts ...Option) *Allocator {
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
