package inbox

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/redact"
)

// Why an entry went to the dead letters (DeadLetter.Kind).
const (
	// DeadPermanent: the handler said retrying cannot help (Permanent).
	DeadPermanent = "permanent"
	// DeadExpired: a transient failure lasted past MaxAge.
	DeadExpired = "expired"
	// DeadAttempts: a transient failure lasted past MaxAttempts.
	DeadAttempts = "attempts"
	// DeadForged: the entry had no valid seal; it was never handled and cannot be replayed.
	DeadForged = "forged"
)

// Errors of the dead-letter operations.
var (
	// ErrNotFound: no dead letter has that id (never, or dropped, or trimmed away).
	ErrNotFound = errors.New("inbox: no such dead letter")
	// ErrUnsealed: the dead letter has no valid seal (a forged entry, or one edited in the
	// storage), so it is never put back into the stream.
	ErrUnsealed = errors.New("inbox: the dead letter has no valid seal and cannot be replayed")
)

// DeadLetter is an entry the consumer gave up on, with why.
type DeadLetter struct {
	// ID names the dead letter within its stream ("<ms>-<seq>", ms being when it died).
	ID string
	// EventID, Key, Payload and Meta are the event as it was stored.
	EventID string
	Key     string
	Payload []byte
	Meta    map[string]string
	// Entry is the stream entry it was; its id tells when the event was stored (StoredAt).
	Entry    string
	StoredAt time.Time
	DiedAt   time.Time
	// Kind is why it died (DeadPermanent, DeadExpired, DeadAttempts, DeadForged; empty for dead
	// letters written before kinds were recorded), Reason the last error with secrets masked,
	// Attempts how many times this process tried it.
	Kind     string
	Reason   string
	Attempts int
	// Replayed is set once the dead letter was put back into the stream.
	Replayed *Replay

	rawMeta string
	mac     string
}

// Replay is a dead letter's return into the stream.
type Replay struct {
	// Entry is the new stream entry, At when it was appended.
	Entry string
	At    time.Time
	// Already: an earlier replay did it; this one changed nothing.
	Already bool
}

// DeadQuery selects dead letters, newest first.
type DeadQuery struct {
	// Before, when set, lists only dead letters older than this id (the next page).
	Before string
	// Limit bounds the answer (default 50, at most 500).
	Limit int
}

// deadWhy is what bury records besides the event.
type deadWhy struct {
	kind     string
	reason   string
	attempts int
}

// why is the record of cause for d; the reason is masked (an error text may quote a token).
func why(kind string, d Delivery, cause error) deadWhy {
	return deadWhy{kind: kind, reason: redact.Secrets(cause.Error()), attempts: d.Attempt}
}

// finish fills in what is derived from the stored fields.
func (dl *DeadLetter) finish() {
	if ms, _ := splitID(dl.Entry); ms > 0 {
		dl.StoredAt = time.UnixMilli(int64(ms))
	}
	if ms, _ := splitID(dl.ID); ms > 0 && dl.DiedAt.IsZero() {
		dl.DiedAt = time.UnixMilli(int64(ms))
	}
	if dl.StoredAt.IsZero() {
		dl.StoredAt = dl.DiedAt // never queued (Store.BuryNew): stored as it died
	}
	if dl.rawMeta != "" && dl.rawMeta != "null" {
		_ = json.Unmarshal([]byte(dl.rawMeta), &dl.Meta)
	}
}

// asEntry is the stream entry a replay appends: the event exactly as it was sealed.
func (dl DeadLetter) asEntry() entry {
	return entry{eventID: dl.EventID, key: dl.Key, payload: dl.Payload, meta: dl.rawMeta, mac: dl.mac}
}

func (q DeadQuery) limit() int64 {
	switch {
	case q.Limit <= 0:
		return 50
	case q.Limit > 500:
		return 500
	}
	return int64(q.Limit)
}

// ListDead returns dead letters, newest first.
func (s *Store) ListDead(ctx context.Context, q DeadQuery) ([]DeadLetter, error) {
	if q.Before != "" && !validID(q.Before) {
		return nil, fmt.Errorf("inbox: dead letter id %q: %w", q.Before, ErrNotFound)
	}
	out, err := s.q.deadList(ctx, q.Before, q.limit())
	if err != nil {
		return nil, fmt.Errorf("inbox: list dead letters of %s: %w", s.cfg.Stream, err)
	}
	return out, nil
}

// DeadLetter returns one dead letter (ErrNotFound when there is none with id).
func (s *Store) DeadLetter(ctx context.Context, id string) (DeadLetter, error) {
	if !validID(id) {
		return DeadLetter{}, fmt.Errorf("inbox: dead letter %q: %w", id, ErrNotFound)
	}
	dl, ok, err := s.q.deadGet(ctx, id)
	if err != nil {
		return DeadLetter{}, fmt.Errorf("inbox: dead letter %s: %w", id, err)
	}
	if !ok {
		return DeadLetter{}, fmt.Errorf("inbox: dead letter %s: %w", id, ErrNotFound)
	}
	return dl, nil
}

// Replay puts a dead letter back into the stream as a new entry, to be handled again. It is
// idempotent: the dead letter is marked replayed in the same step, and replaying it again
// returns that first replay (Already) without appending. Only entries carrying this stream's
// seal go back (ErrUnsealed otherwise), so nobody with write access to the storage can have
// an operator replay an event the gateway never received.
func (s *Store) Replay(ctx context.Context, id string) (Replay, error) {
	dl, err := s.DeadLetter(ctx, id)
	if err != nil {
		return Replay{}, err
	}
	if dl.Replayed != nil {
		r := *dl.Replayed
		r.Already = true
		return r, nil
	}
	if want := s.cfg.mac(dl.EventID, dl.Key, dl.Payload, []byte(dl.rawMeta)); dl.mac == "" || !hmac.Equal([]byte(want), []byte(dl.mac)) {
		return Replay{}, fmt.Errorf("inbox: dead letter %s: %w", id, ErrUnsealed)
	}
	r, found, err := s.q.deadReplay(ctx, id, dl.asEntry())
	if err != nil {
		return Replay{}, fmt.Errorf("inbox: replay dead letter %s: %w", id, err)
	}
	if !found {
		return Replay{}, fmt.Errorf("inbox: dead letter %s: %w", id, ErrNotFound)
	}
	if !r.Already {
		s.cfg.Metrics.event(s.cfg.Stream, "replayed", 1)
	}
	return r, nil
}

// Drop deletes a dead letter for good (ErrNotFound when there is none with id).
func (s *Store) Drop(ctx context.Context, id string) error {
	if !validID(id) {
		return fmt.Errorf("inbox: dead letter %q: %w", id, ErrNotFound)
	}
	found, err := s.q.deadDrop(ctx, id)
	if err != nil {
		return fmt.Errorf("inbox: drop dead letter %s: %w", id, err)
	}
	if !found {
		return fmt.Errorf("inbox: dead letter %s: %w", id, ErrNotFound)
	}
	return nil
}

// validID reports whether id has the form of an entry id ("<ms>-<seq>", both decimal).
func validID(id string) bool {
	n, dash := 0, false
	for i, c := range id {
		switch {
		case c >= '0' && c <= '9':
			n++
		case c == '-' && !dash && i > 0 && i < len(id)-1:
			dash = true
		default:
			return false
		}
	}
	return dash && n > 1 && len(id) <= 41
}
