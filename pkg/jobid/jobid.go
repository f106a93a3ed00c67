// Package jobid holds the JobID rules (SPEC §3: the canonical form, parsing a typed one) and
// carries JobIDs in OpenTelemetry baggage. Daily allocates them from a per-day counter kept by a
// state engine: jobid/redisalloc (Redis) or jobid/sqlitealloc (the embedded SQLite engine).
package jobid

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

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
