// Package inbox is the durable inbound queue of the gateways: a webhook event is deduplicated
// and appended to a stream in one atomic step before the webhook is answered, and a consumer
// group then processes the events in order per chat (one chat's events never run concurrently,
// different chats do — also across the consumers of replicas sharing the group, see order.go),
// acknowledges each after its reply went out, and reclaims events left pending by a crashed
// process.
//
// The queue runs on one of two engines with the same behaviour (an Engine; one contract test
// suite runs against both): Redis streams in a distributed deployment (RedisEngine: XADD behind
// a Lua dedupe script, XREADGROUP, XAUTOCLAIM, XACK), or the embedded suite's SQLite state
// database (SQLiteEngine, on pkg/sqlstate): the same stream, group, pending and dead-letter
// model in tables, durable at every commit, with acknowledged entries deleted at once, dedupe
// rows expired by the sqlstate sweeper and blocking reads woken in-process by Notify (a look at
// the file's size and time every half second covers another process writing the same file).
package inbox

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Event is one inbound event as the gateway stores it.
type Event struct {
	// ID is the channel's event id (LINE webhookEventId, Slack event_id); duplicates of an ID are
	// dropped while the dedupe key lives.
	ID string
	// Key orders processing: events with the same key run one after another, in stream order.
	Key string
	// Payload is the gateway's own encoding of the event.
	Payload []byte
	// Meta carries small correlation values (trace context) from the webhook to the consumer.
	Meta map[string]string
}

// Config names the stream and its limits.
type Config struct {
	// Stream names the stream: the full Redis key (including the suite's key prefix), or the
	// stream's name in the SQLite tables. It is part of every entry's seal.
	Stream string
	// Group is the consumer group name.
	Group string
	// DedupeTTL is how long an event id is remembered (default 24 h: LINE and Slack redeliver
	// within minutes to hours).
	DedupeTTL time.Duration
	// MaxLen bounds the stream length and the dead letters (Redis trims approximately, SQLite
	// keeps at most the last MaxLen appends); default 100000.
	MaxLen int64
	// Metrics, when set, counts stored and duplicate events and consumer outcomes.
	Metrics *Metrics
	// Seal is the key every stored entry is signed with (HMAC-SHA256, at least 16 bytes; derive
	// it from a secret only the gateway holds). The consumer refuses entries without a valid
	// seal, so whoever else can write to the engine cannot inject an event — and with it a user the
	// gateway would vouch for.
	Seal []byte
}

// minSeal is the shortest seal key accepted.
const minSeal = 16

func (c Config) validate() error {
	if c.Stream == "" {
		return errors.New("inbox: stream key is required")
	}
	if len(c.Seal) < minSeal {
		return errors.New("inbox: a seal key of at least 16 bytes is required")
	}
	return nil
}

// mac signs one entry: stream, id, key, payload and meta, length-prefixed.
func (c Config) mac(id, key string, payload, meta []byte) string {
	m := hmac.New(sha256.New, c.Seal)
	for _, part := range [][]byte{[]byte(c.Stream), []byte(id), []byte(key), payload, meta} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		m.Write(n[:])
		m.Write(part)
	}
	return base64.RawStdEncoding.EncodeToString(m.Sum(nil))
}

func (c *Config) defaults() {
	if c.Group == "" {
		c.Group = "gateway"
	}
	if c.DedupeTTL <= 0 {
		c.DedupeTTL = 24 * time.Hour
	}
	if c.MaxLen <= 0 {
		c.MaxLen = 100000
	}
}

// Store appends events to the stream.
type Store struct {
	q   queue
	cfg Config
}

// NewStoreOn returns a store for cfg.Stream on the engine e.
func NewStoreOn(e Engine, cfg Config) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.defaults()
	return &Store{q: e.queue(cfg), cfg: cfg}, nil
}

// Result tells what Append did with each event.
type Result struct {
	// StreamIDs holds the stream entry id of each stored event, "" for a duplicate.
	StreamIDs []string
	Stored    int
	Duplicate int
}

// Append stores events that were not seen before, in order. It returns an error when any event
// could not be stored; events stored before the error stay stored and deduplicated (on SQLite
// the events of one call are stored all together or not at all).
func (s *Store) Append(ctx context.Context, events ...Event) (Result, error) {
	res := Result{StreamIDs: make([]string, len(events))}
	if len(events) == 0 {
		return res, nil
	}
	entries := make([]entry, len(events))
	for i, ev := range events {
		if ev.ID == "" || ev.Key == "" {
			return res, fmt.Errorf("inbox: event %d: id and key are required", i)
		}
		meta, err := json.Marshal(ev.Meta)
		if err != nil {
			return res, fmt.Errorf("inbox: event %s meta: %w", ev.ID, err)
		}
		entries[i] = entry{eventID: ev.ID, key: ev.Key, payload: ev.Payload, meta: string(meta),
			mac: s.cfg.mac(ev.ID, ev.Key, ev.Payload, meta)}
	}
	var firstErr error
	for i, a := range s.q.append(ctx, entries) {
		switch {
		case a.err != nil:
			if firstErr == nil {
				firstErr = fmt.Errorf("inbox: append %s: %w", events[i].ID, a.err)
			}
		case a.id == "":
			res.Duplicate++
		default:
			res.StreamIDs[i] = a.id
			res.Stored++
		}
	}
	s.cfg.Metrics.event(s.cfg.Stream, "stored", res.Stored)
	s.cfg.Metrics.event(s.cfg.Stream, "duplicate", res.Duplicate)
	return res, firstErr
}

// Outstanding reports whether events of key are stored and not yet acknowledged or moved to
// the dead letters. Right after the last one ended it may still say true for a moment (never
// false while one is outstanding).
func (s *Store) Outstanding(ctx context.Context, key string) (bool, error) {
	return s.q.outstanding(ctx, key)
}

// Ping checks that the engine answers (readiness).
func (s *Store) Ping(ctx context.Context) error { return s.q.ping(ctx) }

// Dead returns the number of events moved to the dead letters.
func (s *Store) Dead(ctx context.Context) (int64, error) { return s.q.dead(ctx) }

// Stats reports the stream's length and its consumer group's lag and pending entries.
func (s *Store) Stats(ctx context.Context) (Stats, error) { return s.q.stats(ctx) }
