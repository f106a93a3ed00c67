//go:build !sqliteonly

package inbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// orderKey is the list of key's outstanding entry ids, oldest first (order.go).
func (q *redisQueue) orderKey(key string) string { return q.cfg.Stream + ":order:" + key }

// turnLua defines turn(stream, order, group, id, consumer), an entry's turn decided in one step:
// 2 (lost) when the entry is not pending with the consumer, 1 (wait) while an earlier entry of
// its key is pending in the group, 0 (go) otherwise. Ids at the head of the key's order that are
// not pending any more (acknowledged or trimmed without being settled) are dropped on the way.
const turnLua = `
local function before(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  if not am or not bm then return false end
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  if am ~= bm then return am < bm end
  return as < bs
end
local function turn(stream, order, group, id, consumer)
  local mine = redis.call('XPENDING', stream, group, id, id, 1)
  if #mine == 0 or mine[1][2] ~= consumer then return 2 end
  for i = 1, 64 do
    local head = redis.call('LINDEX', order, 0)
    if not head or not before(head, id) then return 0 end
    if #redis.call('XPENDING', stream, group, head, head, 1) > 0 then return 1 end
    redis.call('LPOP', order)
  end
  return 1
end
`

// turnScript answers turn for the entry ARGV[2] of the stream KEYS[1] whose key's order is
// KEYS[2] (group ARGV[1], consumer ARGV[3]).
var turnScript = redis.NewScript(turnLua + `return turn(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])`)

func (q *redisQueue) turn(ctx context.Context, consumer, key, id string) (turn, error) {
	n, err := turnScript.Run(ctx, q.rdb, []string{q.cfg.Stream, q.orderKey(key)}, q.cfg.Group, id, consumer).Int()
	if err != nil {
		if strings.HasPrefix(err.Error(), "NOGROUP") {
			return turnWait, fmt.Errorf("%w: %w", errNoGroup, err)
		}
		return turnWait, err
	}
	if t := turnOf(n); t != turnUnknown {
		return t, nil
	}
	return turnWait, nil
}

// ackScript acknowledges the entry ARGV[2] of the stream KEYS[1] for the group ARGV[1] and
// removes it from its key's order KEYS[2] (when given) after the ack, so an id still pending is
// never dropped; with ARGV[3] it answers that entry's turn for the consumer ARGV[4], -1 when it
// could not tell. Only the XACK fails the script: the order's steps run protected, an id left
// behind is dropped by the next turn that meets it.
var ackScript = redis.NewScript(turnLua + `
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
if KEYS[2] then
  redis.pcall('LREM', KEYS[2], 1, ARGV[2])
  if ARGV[3] ~= '' then
    local ok, t = pcall(turn, KEYS[1], KEYS[2], ARGV[1], ARGV[3], ARGV[4])
    if ok then return t end
  end
end
return -1
`)

func (q *redisQueue) ack(ctx context.Context, consumer, key, id, next string) (turn, error) {
	keys := []string{q.cfg.Stream}
	if key != "" {
		keys = append(keys, q.orderKey(key))
	}
	// Run sends EVALSHA and, when Redis lost its scripts, EVAL once: the script reaches Redis once.
	n, err := ackScript.Run(ctx, q.rdb, keys, q.cfg.Group, id, next, consumer).Int()
	if err != nil {
		return turnUnknown, err
	}
	return turnOf(n), nil
}

// touchScript resets the idle time of the entries that are still pending with the consumer
// (XCLAIM to itself) and leaves alone those another consumer took over meanwhile: a keep-alive
// never takes an entry back.
var touchScript = redis.NewScript(`
for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if #p > 0 and p[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
  end
end
return 0
`)

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// outstanding reads the key's order: the ids of its entries not settled yet. An id whose entry
// was trimmed away while pending stays until the next turn drops it, so the answer errs
// towards "outstanding".
func (q *redisQueue) outstanding(ctx context.Context, key string) (bool, error) {
	n, err := q.rdb.LLen(ctx, q.orderKey(key)).Result()
	return n > 0, err
}

func (q *redisQueue) prune(ctx context.Context, idle time.Duration) (int, error) {
	consumers, err := q.rdb.XInfoConsumers(ctx, q.cfg.Stream, q.cfg.Group).Result()
	if err != nil {
		if strings.HasPrefix(err.Error(), "NOGROUP") || errors.Is(err, redis.Nil) {
			return 0, nil
		}
		return 0, err
	}
	n := 0
	for _, c := range consumers {
		if c.Pending > 0 || c.Idle < idle {
			continue
		}
		// DELCONSUMER would drop entries still pending with it: it has none (checked just now,
		// and a consumer idle this long is not reading).
		if err := q.rdb.XGroupDelConsumer(ctx, q.cfg.Stream, q.cfg.Group, c.Name).Err(); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
