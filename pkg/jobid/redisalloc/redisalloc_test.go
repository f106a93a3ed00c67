package redisalloc

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
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

// With a floor, a day's counter that is missing — a new day, or one lost in a FLUSHALL — starts
// above the highest id the audit store holds; concurrent allocators never hand one out twice.
func TestMissingCounterStartsAboveTheFloor(t *testing.T) {
	r := testinfra.Redis(t)
	tokyo := jobidtest.Tokyo(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, tokyo)
	floor := int64(41)
	floors := 0
	a := New(r.Client, tokyo, r.Prefix, jobid.WithClock(func() time.Time { return now }),
		jobid.WithFloor(func(_ context.Context, day string) (int64, error) {
			if day != "20260301" {
				t.Errorf("floor asked for %s", day)
			}
			floors++
			return floor, nil
		}))
	ctx := context.Background()
	next := func() string {
		t.Helper()
		id, err := a.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	if id := next(); id != "job_20260301_042" {
		t.Fatalf("first id %s, want job_20260301_042", id)
	}
	if id := next(); id != "job_20260301_043" || floors != 1 {
		t.Fatalf("second id %s (floor asked %d times)", id, floors)
	}
	// The counter is lost; the audit store meanwhile holds up to 57.
	if err := r.Client.Del(ctx, (&counter{prefix: r.Prefix}).key("20260301")).Err(); err != nil {
		t.Fatal(err)
	}
	floor = 57
	seen := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			id, err := a.Next(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if seen[id] {
				t.Errorf("%s handed out twice", id)
			}
			seen[id] = true
			if n, _ := strconv.Atoi(strings.TrimPrefix(id, "job_20260301_")); n <= 57 {
				t.Errorf("%s is at or below the floor", id)
			}
		})
	}
	wg.Wait()
}

// Without an answer from the floor, a missing counter gives the fallback form, never a number
// that may already be taken.
func TestUnknownFloorFallsBack(t *testing.T) {
	r := testinfra.Redis(t)
	a := New(r.Client, jobidtest.Tokyo(t), r.Prefix, jobid.WithFloor(func(context.Context, string) (int64, error) {
		return 0, errors.New("approval unreachable")
	}))
	id, err := a.Next(context.Background())
	if err != nil || !jobid.Valid(id) || len(strings.TrimPrefix(id, id[:13])) != 8 {
		t.Fatalf("id %q, %v; want the fallback form", id, err)
	}
}
