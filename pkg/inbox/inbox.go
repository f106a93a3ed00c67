// Package inbox is the durable inbound queue of the gateways: a webhook event is deduplicated
// and appended to a Redis stream in one atomic step before the webhook is answered, and a
// consumer group then processes the events in order per chat (one chat's events never run
// concurrently, different chats do), acknowledges each after its reply went out, and reclaims
// events left pending by a crashed process.
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
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
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
	// Stream is the full Redis key of the stream (including the suite's key prefix).
	Stream string
	// Group is the consumer group name.
	Group string
	// DedupeTTL is how long an event id is remembered (default 24 h: LINE and Slack redeliver
	// within minutes to hours).
	DedupeTTL time.Duration
	// MaxLen bounds the stream length (approximate trimming); default 100000.
	MaxLen int64
	// Metrics, when set, counts stored and duplicate events and consumer outcomes.
	Metrics *Metrics
	// Seal is the key every stored entry is signed with (HMAC-SHA256, at least 16 bytes; derive
	// it from a secret only the gateway holds). The consumer refuses entries without a valid
	// seal, so whoever else can write to Redis cannot inject an event — and with it a user the
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

func (c Config) dedupeKey(id string) string { return c.Stream + ":seen:" + id }
func (c Config) deadKey() string            { return c.Stream + ":dead" }

// Store appends events to the stream.
type Store struct {
	rdb redis.UniversalClient
	cfg Config
}

// NewStore returns a store for cfg.Stream.
func NewStore(rdb redis.UniversalClient, cfg Config) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.defaults()
	return &Store{rdb: rdb, cfg: cfg}, nil
}

// appendScript sets the dedupe key and appends the entry in one step, so an event is either
// both remembered and stored or neither (a failed append can be redelivered and stored later).
var appendScript = redis.NewScript(`
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then
  return redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'id', ARGV[3], 'key', ARGV[4], 'payload', ARGV[5], 'meta', ARGV[6], 'mac', ARGV[7])
end
return false
`)

// Result tells what Append did with each event.
type Result struct {
	// StreamIDs holds the stream entry id of each stored event, "" for a duplicate.
	StreamIDs []string
	Stored    int
	Duplicate int
}

// Append stores events that were not seen before, in order. It returns an error when any event
// could not be stored; events stored before the error stay stored and deduplicated.
func (s *Store) Append(ctx context.Context, events ...Event) (Result, error) {
	res := Result{StreamIDs: make([]string, len(events))}
	if len(events) == 0 {
		return res, nil
	}
	metas := make([][]byte, len(events))
	for i, ev := range events {
		if ev.ID == "" || ev.Key == "" {
			return res, fmt.Errorf("inbox: event %d: id and key are required", i)
		}
		meta, err := json.Marshal(ev.Meta)
		if err != nil {
			return res, fmt.Errorf("inbox: event %s meta: %w", ev.ID, err)
		}
		metas[i] = meta
	}
	cmds, err := s.appendOnce(ctx, events, metas)
	if err != nil && isNoScript(err) {
		// Redis lost its script cache (restart): load it again and retry once.
		if lerr := appendScript.Load(ctx, s.rdb).Err(); lerr != nil {
			return res, fmt.Errorf("inbox: load script: %w", lerr)
		}
		cmds, _ = s.appendOnce(ctx, events, metas)
	}
	var firstErr error
	for i, c := range cmds {
		v, cerr := c.Result()
		switch {
		case errors.Is(cerr, redis.Nil):
			res.Duplicate++
		case cerr != nil:
			if firstErr == nil {
				firstErr = fmt.Errorf("inbox: append %s: %w", events[i].ID, cerr)
			}
		default:
			id, _ := v.(string)
			res.StreamIDs[i] = id
			res.Stored++
		}
	}
	s.cfg.Metrics.event(s.cfg.Stream, "stored", res.Stored)
	s.cfg.Metrics.event(s.cfg.Stream, "duplicate", res.Duplicate)
	return res, firstErr
}

func (s *Store) appendOnce(ctx context.Context, events []Event, metas [][]byte) ([]*redis.Cmd, error) {
	ttl := int64(s.cfg.DedupeTTL / time.Second)
	if ttl < 1 {
		ttl = 1
	}
	cmds := make([]*redis.Cmd, len(events))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, ev := range events {
			cmds[i] = appendScript.EvalSha(ctx, p, []string{s.cfg.dedupeKey(ev.ID), s.cfg.Stream},
				ttl, s.cfg.MaxLen, ev.ID, ev.Key, ev.Payload, metas[i], s.cfg.mac(ev.ID, ev.Key, ev.Payload, metas[i]))
		}
		return nil
	})
	return cmds, err
}

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// Ping checks that Redis answers (readiness).
func (s *Store) Ping(ctx context.Context) error { return s.rdb.Ping(ctx).Err() }

// Dead returns the number of events moved to the dead-letter stream.
func (s *Store) Dead(ctx context.Context) (int64, error) {
	return s.rdb.XLen(ctx, s.cfg.deadKey()).Result()
}
