package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// memoryTTL is how long the short memory of a chat is kept.
const memoryTTL = 48 * time.Hour

// orDefaultTTL is the session lifetime, 30 days unless configured.
func orDefaultTTL(sessionTTL time.Duration) time.Duration {
	if sessionTTL <= 0 {
		return 30 * 24 * time.Hour
	}
	return sessionTTL
}

func unavailable(op string, err error) error {
	return fmt.Errorf("session store %s: %w: %w", op, domain.ErrUnavailable, err)
}

// encodeTurns is the stored form of turns, one JSON object each (both engines).
func encodeTurns(turns []domain.Turn) ([]string, error) {
	out := make([]string, 0, len(turns))
	for _, t := range turns {
		b, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("encode turn: %w", err)
		}
		out = append(out, string(b))
	}
	return out, nil
}

// decodeTurns skips what does not decode: a damaged entry must not lose the rest.
func decodeTurns(raw []string) []domain.Turn {
	var out []domain.Turn
	for _, r := range raw {
		if t, ok := decodeTurn([]byte(r)); ok {
			out = append(out, t)
		}
	}
	return out
}

// decodeTurn is the turn stored as raw; false when it does not decode.
func decodeTurn(raw []byte) (domain.Turn, bool) {
	var t domain.Turn
	return t, json.Unmarshal(raw, &t) == nil
}
