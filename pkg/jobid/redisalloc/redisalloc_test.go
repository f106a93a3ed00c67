package redisalloc

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid/jobidtest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

func engine(t *testing.T) jobidtest.Engine {
	r := testinfra.Redis(t)
	key := func(day string) string { return (&counter{prefix: r.Prefix}).key(day) }
	var conn *redis.Client
	return jobidtest.Engine{
		Open: func(t *testing.T, opts ...jobid.Option) jobid.Allocator {
			if conn != nil {
				_ = conn.Close()
			}
			conn = redis.NewClient(&redis.Options{Addr: r.Addr})
			c := conn
			t.Cleanup(func() { _ = c.Close() })
			return New(conn, jobidtest.Tokyo(t), r.Prefix, opts...)
		},
		Broken: func(t *testing.T, opts ...jobid.Option) jobid.Allocator {
			// A port nobody listens on: every command fails fast.
			rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
			t.Cleanup(func() { _ = rdb.Close() })
			return New(rdb, jobidtest.Tokyo(t), r.Prefix, opts...)
		},
		TTL: func(t *testing.T, day string) time.Duration {
			ttl, err := r.Client.PTTL(context.Background(), key(day)).Result()
			if err != nil {
				t.Fatal(err)
			}
			return ttl
		},
		Expire: func(t *testing.T, day string) {
			if err := r.Client.PExpireAt(context.Background(), key(day), time.Now().Add(-time.Second)).Err(); err != nil {
				t.Fatal(err)
			}
		},
	}
}

func TestContract(t *testing.T) { jobidtest.Contract(t, engine) }

func BenchmarkNext(b *testing.B) {
	r := testinfra.Redis(b)
	jobidtest.Benchmark(b, New(r.Client, time.UTC, r.Prefix))
}
