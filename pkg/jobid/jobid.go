// Package jobid holds the JobID rules (SPEC §3: the canonical form, parsing a typed one) and
// carries JobIDs in OpenTelemetry baggage. Daily allocates them from a per-day counter kept by a
// state engine: jobid/redisalloc (Redis) or jobid/sqlitealloc (the embedded SQLite engine).
package jobid

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/baggage"
)

// BaggageKey is the W3C baggage member that carries the JobID across services.
const BaggageKey = "job_id"

// ErrInvalid is returned for text that is not a JobID.
var ErrInvalid = errors.New("invalid job id")

// Normalize accepts a user-typed JobID case-insensitively and with surrounding whitespace and
// returns its canonical form.
func Normalize(s string) (string, error) {
	id := strings.ToLower(strings.TrimSpace(s))
	if !Valid(id) {
		return "", fmt.Errorf("%w: %q (expected job_YYYYMMDD_NNN)", ErrInvalid, strings.TrimSpace(s))
	}
	return id, nil
}

// Valid reports whether s is a canonical JobID: job_, the day's eight digits, _, then three or
// more digits (the day's counter) or eight lowercase hex digits (the fallback form); as the
// pattern ^job_[0-9]{8}_(?:[0-9]{3,}|[0-9a-f]{8})$ says, checked without a regular expression
// because every log line and every call that carries a JobID asks.
func Valid(s string) bool {
	const head = len("job_YYYYMMDD_")
	if len(s) < head+3 || s[:4] != "job_" || s[head-1] != '_' || !all(s[4:head-1], isDigit) {
		return false
	}
	tail := s[head:]
	return all(tail, isDigit) || len(tail) == 8 && all(tail, isLowerHex)
}

func all(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isLowerHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' }

// WithJobID returns ctx whose baggage carries id. An id that baggage cannot carry is ignored.
func WithJobID(ctx context.Context, id string) context.Context {
	bag := baggage.FromContext(ctx)
	if cur := bag.Member(BaggageKey); cur.Value() == id && len(cur.Properties()) == 0 && cur.Key() != "" {
		// Carried already, as it would be set: the context stays as it is.
		return ctx
	}
	m, err := baggage.NewMemberRaw(BaggageKey, id)
	if err != nil {
		return ctx
	}
	b, err := bag.SetMember(m)
	if err != nil {
		return ctx
	}
	return baggage.ContextWithBaggage(ctx, b)
}

// FromContext returns the JobID in ctx's baggage, or "".
func FromContext(ctx context.Context) string {
	return baggage.FromContext(ctx).Member(BaggageKey).Value()
}
