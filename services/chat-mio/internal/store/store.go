package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

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

// decodeTurn is the turn stored as raw; false when it does not decode. Every message loads the
// day's memory, so the form encodeTurns writes ({"role":…,"text":…,"at":…}, strings without
// escapes) is read directly; anything else goes through encoding/json.
func decodeTurn(raw []byte) (domain.Turn, bool) {
	if t, ok := decodeTurnFast(raw); ok {
		return t, true
	}
	var t domain.Turn
	return t, json.Unmarshal(raw, &t) == nil
}

// decodeTurnFast reads exactly {"role":"…","text":"…","at":"<RFC 3339>"} whose strings hold no
// backslash or control character; false for anything else (then encoding/json decides).
func decodeTurnFast(raw []byte) (domain.Turn, bool) {
	rest, ok := bytes.CutPrefix(raw, []byte(`{"role":`))
	if !ok {
		return domain.Turn{}, false
	}
	role, rest, ok := plainString(rest)
	if !ok {
		return domain.Turn{}, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"text":`)); !ok {
		return domain.Turn{}, false
	}
	text, rest, ok := plainString(rest)
	if !ok {
		return domain.Turn{}, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"at":`)); !ok {
		return domain.Turn{}, false
	}
	at, rest, ok := plainString(rest)
	if !ok || string(rest) != "}" {
		return domain.Turn{}, false
	}
	when, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return domain.Turn{}, false
	}
	return domain.Turn{Role: role, Text: text, At: when}, true
}

// plainString reads a JSON string at the start of b that needs no unescaping (no backslash, no
// control character, valid UTF-8) and returns it with what follows it.
func plainString(b []byte) (string, []byte, bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", nil, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			s := b[1:i]
			if !utf8.Valid(s) {
				return "", nil, false
			}
			return string(s), b[i+1:], true
		case c == '\\' || c < 0x20:
			return "", nil, false
		}
	}
	return "", nil, false
}
