package store_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/store"
)

func TestRedisContract(t *testing.T) {
	contract(t, func(t *testing.T) engine {
		r := testinfra.Redis(t)
		conn := redis.NewClient(&redis.Options{Addr: r.Addr})
		t.Cleanup(func() { _ = conn.Close() })
		return engine{
			store: store.NewRedis(conn, r.Prefix),
			reopen: func(t *testing.T) app.Store {
				_ = conn.Close()
				conn = redis.NewClient(&redis.Options{Addr: r.Addr})
				return store.NewRedis(conn, r.Prefix)
			},
		}
	})
}
