//go:build !sqliteonly

package store

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
)

func redisEngine(t *testing.T) engine {
	r := testinfra.Redis(t)
	keys := NewRedis(nil, r.Prefix, sessionTTL)
	key := func(it item) string {
		switch it.kind {
		case "session":
			return keys.sessionKey(it.id)
		case "pending":
			return keys.pendingKey(it.id)
		case "memory":
			return keys.memKey(it.id, it.day)
		case "options":
			return keys.optionsKey(it.id)
		case "reply":
			return keys.replyKey(it.id)
		case "note":
			return keys.noteKey(it.id, it.day)
		}
		t.Fatalf("unknown item %+v", it)
		return ""
	}
	conn := redis.NewClient(&redis.Options{Addr: r.Addr})
	t.Cleanup(func() { _ = conn.Close() })
	return engine{
		store: NewRedis(conn, r.Prefix, sessionTTL),
		reopen: func(t *testing.T) app.SessionStore {
			_ = conn.Close()
			conn = redis.NewClient(&redis.Options{Addr: r.Addr})
			return NewRedis(conn, r.Prefix, sessionTTL)
		},
		ttl: func(t *testing.T, it item) time.Duration {
			ttl, err := r.Client.PTTL(context.Background(), key(it)).Result()
			switch {
			case err != nil:
				t.Fatal(err)
			case ttl == -2:
				t.Fatalf("%+v does not exist", it)
			case ttl == -1:
				return 0
			}
			return ttl
		},
		expire: func(t *testing.T, it item) {
			if err := r.Client.PExpireAt(context.Background(), key(it), time.Now().Add(-time.Second)).Err(); err != nil {
				t.Fatal(err)
			}
		},
		down: func(t *testing.T) app.SessionStore {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1, DialerRetries: 1})
			t.Cleanup(func() { _ = c.Close() })
			return NewRedis(c, "x:", sessionTTL)
		},
	}
}

func TestRedisContract(t *testing.T) { contract(t, redisEngine) }

func BenchmarkRedis(b *testing.B) {
	r := testinfra.Redis(b)
	benchmark(b, NewRedis(r.Client, r.Prefix, sessionTTL))
}
