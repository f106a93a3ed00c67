package redisalloc

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

func tokyo(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestConcurrentAllocationsAreDistinct(t *testing.T) {
	r := testinfra.Redis(t)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, tokyo(t))
	a := New(r.Client, tokyo(t), r.Prefix, WithClock(func() time.Time { return now }))
	const n = 1000
	ids := make(chan string, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := a.Next(context.Background())
			if err != nil {
				errs <- err
				return
			}
			ids <- id
		}()
	}
	wg.Wait()
	close(ids)
	close(errs)
	for err := range errs {
		t.Fatalf("allocation failed: %v", err)
	}
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
		if !jobid.Valid(id) || !strings.HasPrefix(id, "job_20261121_") {
			t.Fatalf("bad id %q", id)
		}
		if len(id) >= len("job_20261121_")+8 {
			t.Fatalf("fallback-shaped id %q with Redis up", id)
		}
	}
	if len(seen) != n {
		t.Fatalf("got %d ids, want %d", len(seen), n)
	}
	if !seen["job_20261121_001"] || !seen["job_20261121_1000"] {
		t.Fatalf("counter does not run 001..1000")
	}
	ttl := r.Client.TTL(context.Background(), r.Prefix+"jobid:20261121").Val()
	if ttl <= 47*time.Hour || ttl > 48*time.Hour {
		t.Fatalf("counter key TTL = %v, want about 48h", ttl)
	}
}

func TestDayBoundaryInConfiguredZone(t *testing.T) {
	r := testinfra.Redis(t)
	loc := tokyo(t)
	// 23:59:59 in Tokyo is still the 21st; one second later the counter starts again.
	clock := time.Date(2026, 11, 21, 23, 59, 59, 0, loc)
	a := New(r.Client, loc, r.Prefix, WithClock(func() time.Time { return clock }))
	ctx := context.Background()
	first, _ := a.Next(ctx)
	second, _ := a.Next(ctx)
	clock = clock.Add(time.Second)
	third, _ := a.Next(ctx)
	if first != "job_20261121_001" || second != "job_20261121_002" || third != "job_20261122_001" {
		t.Fatalf("got %s %s %s", first, second, third)
	}
	// 2026-11-21 15:30 UTC is already the 22nd in Tokyo.
	clock = time.Date(2026, 11, 21, 15, 30, 0, 0, time.UTC)
	if id, _ := a.Next(ctx); id != "job_20261122_002" {
		t.Fatalf("UTC instant mapped to %s, want the Tokyo date", id)
	}
}

func TestFallbackWhenRedisIsDown(t *testing.T) {
	// A port nobody listens on: every command fails fast.
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer rdb.Close()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, tokyo(t))
	a := New(rdb, tokyo(t), "x:", WithClock(func() time.Time { return now }), WithLogger(log))
	id, err := a.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(id) != len("job_20261121_")+8 || !strings.HasPrefix(id, "job_20261121_") || !jobid.Valid(id) {
		t.Fatalf("fallback id %q", id)
	}
	if !strings.Contains(buf.String(), `"msg":"jobid.fallback"`) || !strings.Contains(buf.String(), id) {
		t.Fatalf("fallback not logged: %s", buf.String())
	}
}
