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

// turnScript decides an entry's turn in one step: 2 (lost) when the entry is not pending with
// the consumer, 1 (wait) while an earlier entry of its key is pending in the group, 0 (go)
// otherwise. Ids at the head of the key's order that are not pending any more (acknowledged or
// trimmed without being settled) are dropped on the way.
var turnScript = redis.NewScript(`
local function before(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  if not am or not bm then return false end
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  if am ~= bm then return am < bm end
  return as < bs
end
local mine = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)
if #mine == 0 or mine[1][2] ~= ARGV[3] then return 2 end
for i = 1, 64 do
  local head = redis.call('LINDEX', KEYS[2], 0)
  if not head or not before(head, ARGV[2]) then return 0 end
  if #redis.call('XPENDING', KEYS[1], ARGV[1], head, head, 1) > 0 then return 1 end
  redis.call('LPOP', KEYS[2])
end
return 1
`)

func (q *redisQueue) turn(ctx context.Context, consumer, key, id string) (turn, error) {
	n, err := turnScript.Run(ctx, q.rdb, []string{q.cfg.Stream, q.orderKey(key)}, q.cfg.Group, id, consumer).Int()
	if err != nil {
		if strings.HasPrefix(err.Error(), "NOGROUP") {
			return turnWait, fmt.Errorf("%w: %w", errNoGroup, err)
		}
		return turnWait, err
	}
	switch n {
	case 0:
		return turnGo, nil
	case 2:
		return turnLost, nil
	}
	return turnWait, nil
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

func (q *redisQueue) settled(ctx context.Context, key, id string) error {
	return q.rdb.LRem(ctx, q.orderKey(key), 1, id).Err()
}

// outstanding reads the key's order: the ids of its entries not settled yet. An id whose entry
// was acknowledged but whose settle failed stays until the next turn drops it, so the answer
// errs towards "outstanding".
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
