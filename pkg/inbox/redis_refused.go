//go:build !sqliteonly

package inbox

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// buryNewScript remembers the event id and adds the dead letter in one step (as appendScript
// does for an entry); a seen id is left alone.
var buryNewScript = redis.NewScript(`
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then
  return redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'id', ARGV[3], 'key', ARGV[4], 'payload', ARGV[5], 'meta', ARGV[6],
    'mac', ARGV[7], 'entry', '', 'error', ARGV[8], 'kind', ARGV[9], 'attempts', ARGV[10])
end
return false
`)

func (q *redisQueue) buryNew(ctx context.Context, e entry, w deadWhy) (bool, error) {
	ttl := max(int64(q.cfg.DedupeTTL/time.Second), 1)
	err := buryNewScript.Run(ctx, q.rdb, []string{q.dedupeKey(e.eventID), q.deadKey()},
		ttl, q.cfg.MaxLen, e.eventID, e.key, e.payload, e.meta, e.mac, w.reason, w.kind, w.attempts).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, err
}
