//go:build !sqliteonly

package inbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisEngine keeps the queue in Redis: one stream per Config.Stream with a consumer group, the
// dedupe keys and marks as keys with a TTL, the dead letters in the stream "<Stream>:dead" and
// the marks of replayed dead letters in the hash "<Stream>:dead:replayed".
func RedisEngine(rdb redis.UniversalClient) Engine { return redisEngine{rdb: rdb} }

type redisEngine struct{ rdb redis.UniversalClient }

func (e redisEngine) queue(cfg Config) queue { return &redisQueue{rdb: e.rdb, cfg: cfg} }

func (e redisEngine) marks(prefix string, ttl time.Duration) marker {
	return redisMarks{rdb: e.rdb, prefix: prefix, ttl: ttl}
}

type redisQueue struct {
	rdb redis.UniversalClient
	cfg Config
}

func (q *redisQueue) dedupeKey(id string) string { return q.cfg.Stream + ":seen:" + id }
func (q *redisQueue) deadKey() string            { return q.cfg.Stream + ":dead" }

// appendScript sets the dedupe key, appends the entry and records it in its key's order
// (order.go) in one step, so an event is either both remembered and stored or neither (a
// failed append can be redelivered and stored later). An entry appended while its key's order
// is empty is marked first (firstField): no earlier entry of its key is outstanding, and none
// can be any more, so its first delivery is its turn (read).
var appendScript = redis.NewScript(`
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then
  local f = {'XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'id', ARGV[3], 'key', ARGV[4], 'payload', ARGV[5], 'meta', ARGV[6], 'mac', ARGV[7]}
  if redis.call('EXISTS', KEYS[3]) == 0 then
    f[#f + 1] = '` + firstField + `'
    f[#f + 1] = '1'
  end
  local id = redis.call(unpack(f))
  redis.call('RPUSH', KEYS[3], id)
  redis.call('EXPIRE', KEYS[3], ARGV[8])
  return id
end
return false
`)

func (q *redisQueue) append(ctx context.Context, entries []entry) []appended {
	cmds, err := q.appendOnce(ctx, entries)
	if err != nil && isNoScript(err) {
		// Redis lost its script cache (restart): load it again and retry once.
		if lerr := appendScript.Load(ctx, q.rdb).Err(); lerr != nil {
			return failAll(len(entries), fmt.Errorf("load script: %w", lerr))
		}
		cmds, _ = q.appendOnce(ctx, entries)
	}
	res := make([]appended, len(entries))
	for i, c := range cmds {
		v, cerr := c.Result()
		switch {
		case errors.Is(cerr, redis.Nil): // duplicate
		case cerr != nil:
			res[i].err = cerr
		default:
			res[i].id, _ = v.(string)
		}
	}
	return res
}

func (q *redisQueue) appendOnce(ctx context.Context, entries []entry) ([]*redis.Cmd, error) {
	ttl := int64(q.cfg.DedupeTTL / time.Second)
	if ttl < 1 {
		ttl = 1
	}
	cmds := make([]*redis.Cmd, len(entries))
	_, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, e := range entries {
			cmds[i] = appendScript.EvalSha(ctx, p, []string{q.dedupeKey(e.eventID), q.cfg.Stream, q.orderKey(e.key)},
				ttl, q.cfg.MaxLen, e.eventID, e.key, e.payload, e.meta, e.mac, int64(orderTTL/time.Second))
		}
		return nil
	})
	return cmds, err
}

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

func (q *redisQueue) ping(ctx context.Context) error { return q.rdb.Ping(ctx).Err() }

func (q *redisQueue) dead(ctx context.Context) (int64, error) {
	return q.rdb.XLen(ctx, q.deadKey()).Result()
}

func (q *redisQueue) stats(ctx context.Context) (Stats, error) {
	n, err := q.rdb.XLen(ctx, q.cfg.Stream).Result()
	if err != nil {
		return Stats{}, err
	}
	st := Stats{Length: n, Lag: -1}
	groups, err := q.rdb.XInfoGroups(ctx, q.cfg.Stream).Result()
	if err != nil {
		if n == 0 && strings.Contains(err.Error(), "no such key") {
			return st, nil // no stream yet, so no group either
		}
		return st, err
	}
	for _, g := range groups {
		if g.Name == q.cfg.Group {
			st.Group, st.Lag, st.Pending = true, g.Lag, g.Pending
		}
	}
	return st, nil
}

func (q *redisQueue) ensureGroup(ctx context.Context) error {
	// "0": entries appended before the group existed are processed too.
	err := q.rdb.XGroupCreateMkStream(ctx, q.cfg.Stream, q.cfg.Group, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return err
	}
	return nil
}

func (q *redisQueue) readNew(ctx context.Context, consumer string, count int64, block time.Duration) ([]entry, error) {
	return q.read(ctx, consumer, ">", count, block)
}

func (q *redisQueue) readOwn(ctx context.Context, consumer, after string, count int64) ([]entry, error) {
	return q.read(ctx, consumer, after, count, -1) // history reads never wait
}

func (q *redisQueue) read(ctx context.Context, consumer, from string, count int64, block time.Duration) ([]entry, error) {
	streams, err := q.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: q.cfg.Group, Consumer: consumer, Streams: []string{q.cfg.Stream, from}, Count: count, Block: block,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		if strings.HasPrefix(err.Error(), "NOGROUP") {
			return nil, fmt.Errorf("%w: %w", errNoGroup, err)
		}
		return nil, err
	}
	var out []entry
	for _, s := range streams {
		es := fromRedis(s.Messages)
		if from == ">" {
			// Delivered now for the first time, an entry is this consumer's; appended first, it
			// has no earlier entry of its key outstanding: its turn is go without asking (order.go).
			for i, m := range s.Messages {
				es[i].goAtDelivery = m.Values[firstField] == "1"
			}
		}
		out = append(out, es...)
	}
	return out, nil
}

// firstField marks a stream entry appended while no other entry of its key was outstanding.
const firstField = "first"

func (q *redisQueue) claimIdle(ctx context.Context, consumer string, minIdle time.Duration, start string, count int64) ([]entry, string, error) {
	if start == "" {
		start = "0-0"
	}
	msgs, next, err := q.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
		Stream: q.cfg.Stream, Group: q.cfg.Group, Consumer: consumer, MinIdle: minIdle, Start: start, Count: count,
	}).Result()
	if err != nil {
		return nil, "", err
	}
	if next == "0-0" {
		next = ""
	}
	return fromRedis(msgs), next, nil
}

func (q *redisQueue) touch(ctx context.Context, consumer string, ids []string) error {
	return touchScript.Run(ctx, q.rdb, []string{q.cfg.Stream}, append([]any{q.cfg.Group, consumer}, anys(ids)...)...).Err()
}

func (q *redisQueue) bury(ctx context.Context, d Delivery, meta []byte, w deadWhy) error {
	var add *redis.StringCmd
	var ack *redis.IntCmd
	_, err := q.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		add = p.XAdd(ctx, &redis.XAddArgs{Stream: q.deadKey(), MaxLen: q.cfg.MaxLen, Approx: true, Values: []any{
			"id", d.ID, "key", d.Key, "payload", d.Payload, "meta", meta, "mac", d.mac, "entry", d.StreamID,
			"error", w.reason, "kind", w.kind, "attempts", w.attempts,
		}})
		ack = p.XAck(ctx, q.cfg.Stream, q.cfg.Group, d.StreamID)
		if d.Key != "" {
			// After the XACK in the same MULTI: the id leaves the order once it is not pending.
			p.LRem(ctx, q.orderKey(d.Key), 1, d.StreamID)
		}
		return nil
	})
	if err != nil && add.Err() == nil && ack.Err() == nil {
		// Only the order's LREM failed: the entry is buried (a retry would bury it twice), and
		// the next turn that meets the id drops it.
		return nil
	}
	return err
}

// replayedKey is the hash of replayed dead letters: dead letter id → "<new entry id> <ms>".
func (q *redisQueue) replayedKey() string { return q.cfg.Stream + ":dead:replayed" }

func (q *redisQueue) deadList(ctx context.Context, before string, count int64) ([]DeadLetter, error) {
	end := "+"
	if before != "" {
		end = "(" + before
	}
	msgs, err := q.rdb.XRevRangeN(ctx, q.deadKey(), end, "-", count).Result()
	if err != nil {
		return nil, err
	}
	return q.deadLetters(ctx, msgs)
}

func (q *redisQueue) deadGet(ctx context.Context, id string) (DeadLetter, bool, error) {
	msgs, err := q.rdb.XRange(ctx, q.deadKey(), id, id).Result()
	if err != nil || len(msgs) == 0 {
		return DeadLetter{}, false, err
	}
	out, err := q.deadLetters(ctx, msgs)
	if err != nil {
		return DeadLetter{}, false, err
	}
	return out[0], true, nil
}

// deadLetters reads dead-letter stream entries and their replay marks.
func (q *redisQueue) deadLetters(ctx context.Context, msgs []redis.XMessage) ([]DeadLetter, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	marks, err := q.rdb.HMGet(ctx, q.replayedKey(), ids...).Result()
	if err != nil {
		return nil, err
	}
	out := make([]DeadLetter, len(msgs))
	for i, m := range msgs {
		str := func(k string) string {
			v, _ := m.Values[k].(string)
			return v
		}
		attempts, _ := strconv.Atoi(str("attempts"))
		dl := DeadLetter{ID: m.ID, EventID: str("id"), Key: str("key"), Payload: []byte(str("payload")), Entry: str("entry"),
			Kind: str("kind"), Reason: str("error"), Attempts: attempts, rawMeta: str("meta"), mac: str("mac")}
		if v, ok := marks[i].(string); ok {
			dl.Replayed = parseReplayed(v)
		}
		dl.finish()
		out[i] = dl
	}
	return out, nil
}

// parseReplayed reads a replay mark "<entry id> <ms>".
func parseReplayed(v string) *Replay {
	entry, ms, _ := strings.Cut(v, " ")
	at, _ := strconv.ParseInt(ms, 10, 64)
	return &Replay{Entry: entry, At: time.UnixMilli(at)}
}

// replayScript appends a dead letter's event to the stream, records it in its key's order (as
// appendScript does) and marks the dead letter replayed, in one step; a marked (or missing)
// dead letter is left alone.
var replayScript = redis.NewScript(`
local done = redis.call('HGET', KEYS[2], ARGV[1])
if done then return {'already', done} end
if #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) == 0 then return {'missing', ''} end
local id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[2], '*', 'id', ARGV[3], 'key', ARGV[4], 'payload', ARGV[5], 'meta', ARGV[6], 'mac', ARGV[7])
redis.call('RPUSH', KEYS[4], id)
redis.call('EXPIRE', KEYS[4], ARGV[8])
local t = redis.call('TIME')
local mark = id .. ' ' .. (t[1] * 1000 + math.floor(t[2] / 1000))
redis.call('HSET', KEYS[2], ARGV[1], mark)
return {'replayed', mark}
`)

func (q *redisQueue) deadReplay(ctx context.Context, id string, e entry) (Replay, bool, error) {
	v, err := replayScript.Run(ctx, q.rdb, []string{q.deadKey(), q.replayedKey(), q.cfg.Stream, q.orderKey(e.key)},
		id, q.cfg.MaxLen, e.eventID, e.key, e.payload, e.meta, e.mac, int64(orderTTL/time.Second)).StringSlice()
	if err != nil {
		return Replay{}, false, err
	}
	if len(v) != 2 {
		return Replay{}, false, fmt.Errorf("replay script answered %q", v)
	}
	switch v[0] {
	case "missing":
		return Replay{}, false, nil
	case "already":
		r := parseReplayed(v[1])
		r.Already = true
		return *r, true, nil
	}
	return *parseReplayed(v[1]), true, nil
}

func (q *redisQueue) deadDrop(ctx context.Context, id string) (bool, error) {
	var del *redis.IntCmd
	_, err := q.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		del = p.XDel(ctx, q.deadKey(), id)
		p.HDel(ctx, q.replayedKey(), id)
		return nil
	})
	if err != nil {
		return false, err
	}
	return del.Val() > 0, nil
}

func fromRedis(msgs []redis.XMessage) []entry {
	out := make([]entry, len(msgs))
	for i, m := range msgs {
		str := func(k string) string {
			v, _ := m.Values[k].(string)
			return v
		}
		out[i] = entry{id: m.ID, eventID: str("id"), key: str("key"), payload: []byte(str("payload")),
			meta: str("meta"), mac: str("mac"), gone: m.Values == nil}
	}
	return out
}

type redisMarks struct {
	rdb    redis.UniversalClient
	prefix string
	ttl    time.Duration
}

func (m redisMarks) done(ctx context.Context, key string) (bool, error) {
	err := m.rdb.Get(ctx, m.prefix+key).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, err
}

func (m redisMarks) mark(ctx context.Context, key string) error {
	return m.rdb.Set(ctx, m.prefix+key, "1", m.ttl).Err()
}

// NewStore returns a store for cfg.Stream in Redis (NewStoreOn with RedisEngine).
func NewStore(rdb redis.UniversalClient, cfg Config) (*Store, error) {
	return NewStoreOn(RedisEngine(rdb), cfg)
}

// NewMarks keeps marks in Redis (NewMarksOn with RedisEngine).
func NewMarks(rdb redis.UniversalClient, prefix string, ttl time.Duration) *Marks {
	return NewMarksOn(RedisEngine(rdb), prefix, ttl)
}

// NewConsumer returns a consumer of cfg.Stream in Redis (NewConsumerOn with RedisEngine).
func NewConsumer(rdb redis.UniversalClient, cfg Config, ccfg ConsumerConfig, h Handler) (*Consumer, error) {
	return NewConsumerOn(RedisEngine(rdb), cfg, ccfg, h)
}
