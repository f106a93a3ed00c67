//go:build !sqliteonly

package inbox_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// The contracts on the Redis engine, which a build with -tags sqliteonly leaves out.

func TestRedisContract(t *testing.T)      { runContract(t, redisBackend) }
func TestRedisOrderContract(t *testing.T) { runOrderContract(t, redisOrderBackend) }

// redisBackend runs on the test's Redis under the test's own key prefix.
func redisBackend(t *testing.T) *backend {
	r := testinfra.Redis(t)
	return &backend{
		engine: inbox.RedisEngine(r.Client),
		prefix: r.Prefix,
		reopen: func() inbox.Engine {
			c := redis.NewClient(&redis.Options{Addr: r.Addr})
			t.Cleanup(func() { _ = c.Close() })
			return inbox.RedisEngine(c)
		},
		seen: func(t *testing.T, stream string) int64 {
			// KEYS leaves out keys whose TTL ran out.
			keys, err := r.Client.Keys(context.Background(), stream+":seen:*").Result()
			if err != nil {
				t.Fatal(err)
			}
			return int64(len(keys))
		},
		forge: func(t *testing.T, stream, id, key, payload, meta, mac string) {
			vals := map[string]any{"id": id, "key": key, "payload": payload, "meta": meta}
			if mac != "" {
				vals["mac"] = mac
			}
			if err := r.Client.XAdd(context.Background(), &redis.XAddArgs{Stream: stream, Values: vals}).Err(); err != nil {
				t.Fatal(err)
			}
		},
		leftovers: func(t *testing.T, stream string) int64 {
			keys, err := r.Client.Keys(context.Background(), stream+":order:*").Result()
			if err != nil {
				t.Fatal(err)
			}
			return int64(len(keys))
		},
	}
}

func redisOrderBackend(t *testing.T) *orderBackend {
	r := testinfra.Redis(t)
	return &orderBackend{
		engine: inbox.RedisEngine(r.Client),
		prefix: r.Prefix,
		move: func(t *testing.T, stream, id, consumer string) {
			err := r.Client.XClaimJustID(context.Background(), &redis.XClaimArgs{Stream: stream, Group: "g", Consumer: consumer, Messages: []string{id}}).Err()
			if err != nil {
				t.Fatal(err)
			}
		},
		owner: func(t *testing.T, stream, id string) string {
			p, err := r.Client.XPendingExt(context.Background(), &redis.XPendingExtArgs{Stream: stream, Group: "g", Start: id, End: id, Count: 1}).Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(p) == 0 {
				return ""
			}
			return p[0].Consumer
		},
		leftovers: func(t *testing.T, stream string) int64 {
			keys, err := r.Client.Keys(context.Background(), stream+":order:*").Result()
			if err != nil {
				t.Fatal(err)
			}
			return int64(len(keys))
		},
		order: func(t *testing.T, stream, key string) []string {
			ids, err := r.Client.LRange(context.Background(), stream+":order:"+key, 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			return ids
		},
	}
}
