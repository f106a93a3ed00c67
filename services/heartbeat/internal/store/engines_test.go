package store_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate/sqlstatetest"
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

func TestSQLiteContract(t *testing.T) {
	contract(t, func(t *testing.T) engine {
		h := sqlstatetest.New(t)
		open := func(t *testing.T, db *sqlstate.DB) app.Store {
			s, err := store.NewSQLite(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		return engine{
			store:  open(t, h.DB()),
			reopen: func(t *testing.T) app.Store { return open(t, h.Reopen()) },
		}
	})
}
