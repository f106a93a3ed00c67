// Package jobidtest is the contract every JobID counter engine passes (Redis, the embedded
// SQLite engine): the tests of each engine run Contract with their own Engine.
package jobidtest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// Engine is one counter engine under test, on state of its own.
type Engine struct {
	// Open returns an allocator on the engine's state. A second call first drops the previous
	// allocator's connection and opens the same state again, as a restarted process would.
	Open func(t *testing.T, opts ...jobid.Option) jobid.Allocator
	// Broken returns an allocator whose engine cannot be reached.
	Broken func(t *testing.T, opts ...jobid.Option) jobid.Allocator
	// TTL is the remaining lifetime of day's counter.
	TTL func(t *testing.T, day string) time.Duration
	// Expire makes day's counter expire now.
	Expire func(t *testing.T, day string)
}

// Tokyo is the zone of the contract's clocks (days are counted in the configured zone).
func Tokyo(t testing.TB) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// Clock is a settable clock for jobid.WithClock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock standing at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock.
func (c *Clock) Set(now time.Time) {
	c.mu.Lock()
	c.now = now
	c.mu.Unlock()
}

// Contract runs the contract; newEngine is called once per case.
func Contract(t *testing.T, newEngine func(t *testing.T) Engine) {
	cases := []struct {
		name string
		run  func(t *testing.T, e Engine)
	}{
		{"Sequential", sequential},
		{"Concurrent", concurrent},
		{"DayBoundaryInConfiguredZone", dayBoundary},
		{"SurvivesReopen", survivesReopen},
		{"CounterExpires", counterExpires},
		{"FallbackWhenEngineIsDown", fallback},
		{"CounterHeldAboveTheFloor", heldAboveFloor},
		{"BlocksDrawnAheadAboveTheFloor", blocksAboveFloor},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newEngine(t)) })
	}
}

func at(t *testing.T, day, hms string) *Clock {
	t.Helper()
	now, err := time.ParseInLocation("20060102 15:04:05", day+" "+hms, Tokyo(t))
	if err != nil {
		t.Fatal(err)
	}
	return NewClock(now)
}

// heldAboveFloor: a restarted allocator raises a counter that is behind the audit store's ids
// (restored from an older snapshot) before its first id, never lowers one that is ahead, and
// starts a lost counter above the floor.
func heldAboveFloor(t *testing.T, e Engine) {
	clock := at(t, "20261121", "10:00:00")
	floor := int64(0)
	withFloor := jobid.WithFloor(func(_ context.Context, day string) (int64, error) {
		if day != "20261121" {
			t.Errorf("floor asked for %s", day)
		}
		return floor, nil
	})
	a := e.Open(t, jobid.WithClock(clock.Now))
	for range 5 {
		Next(t, a)
	}
	floor = 20 // the audit store holds ids up to 20: the counter (5) is behind
	b := e.Open(t, jobid.WithClock(clock.Now), withFloor)
	if got := Next(t, b); got != "job_20261121_021" {
		t.Fatalf("first id after a restart behind the floor = %s, want job_20261121_021", got)
	}
	if got := Next(t, b); got != "job_20261121_022" {
		t.Fatalf("second id = %s, want job_20261121_022", got)
	}
	floor = 10 // behind the counter: it is not lowered
	c := e.Open(t, jobid.WithClock(clock.Now), withFloor)
	if got := Next(t, c); got != "job_20261121_023" {
		t.Fatalf("first id with a floor behind the counter = %s, want job_20261121_023", got)
	}
	e.Expire(t, "20261121")
	floor = 30 // the counter is lost; the audit store holds up to 30
	d := e.Open(t, jobid.WithClock(clock.Now), withFloor)
	if got := Next(t, d); got != "job_20261121_031" {
		t.Fatalf("first id after the counter was lost = %s, want job_20261121_031", got)
	}
}

// blocksAboveFloor: ids drawn ahead in blocks (jobid.Ahead, one engine call for several ids)
// start above the floor and never meet an id the same counter hands out one at a time meanwhile
// (another service).
func blocksAboveFloor(t *testing.T, e Engine) {
	clock := at(t, "20261121", "10:00:00")
	var floor atomic.Int64
	floor.Store(20)
	withFloor := jobid.WithFloor(func(context.Context, string) (int64, error) { return floor.Load(), nil })
	d, ok := e.Open(t, jobid.WithClock(clock.Now), withFloor).(*jobid.Daily)
	if !ok {
		t.Fatal("the engine's allocator is not a jobid.Daily")
	}
	ahead := jobid.NewAhead(t.Context(), d)
	defer ahead.Wait()
	seen := map[string]bool{}
	for i := range 60 {
		id := Next(t, ahead)
		if id <= "job_20261121_020" || seen[id] {
			t.Fatalf("id %d drawn ahead = %s (seen before: %v), want a new one above the floor", i+1, id, seen[id])
		}
		seen[id] = true
		if i%10 == 9 {
			other := Next(t, d)
			if seen[other] {
				t.Fatalf("%s handed out twice", other)
			}
			seen[other] = true
		}
	}
	// 66 ids handed out above 20: the counter is at most a block (and the foreground draws the
	// block could not wait for) ahead of them.
	var n int64
	last := Next(t, d)
	seen[last] = true
	if _, err := fmt.Sscanf(last, "job_20261121_%d", &n); err != nil || n > 20+66+1+2*jobid.MaxBlock {
		t.Fatalf("the counter stood at %s after 66 ids above 20 (%v)", last, err)
	}
	// The counter is lost while a block is held; the audit store holds ids up to 500. The block
	// is used up, then blocks are drawn above the floor.
	e.Expire(t, "20261121")
	floor.Store(500)
	above := 0
	for i := range 3 * jobid.MaxBlock {
		id := Next(t, ahead)
		if seen[id] {
			t.Fatalf("id %d after the loss = %s, handed out before", i+1, id)
		}
		seen[id] = true
		if id > "job_20261121_500" {
			above++
		}
	}
	if above < jobid.MaxBlock {
		t.Fatalf("%d of %d ids after the loss above the floor, want all but the held block", above, 3*jobid.MaxBlock)
	}
}

// Next allocates one id or fails the test.
func Next(t testing.TB, a jobid.Allocator) string {
	t.Helper()
	id, err := a.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func sequential(t *testing.T, e Engine) {
	a := e.Open(t, jobid.WithClock(at(t, "20261121", "09:00:00").Now))
	for i := 1; i <= 12; i++ {
		if got, want := Next(t, a), fmt.Sprintf("job_20261121_%03d", i); got != want {
			t.Fatalf("allocation %d = %s, want %s", i, got, want)
		}
	}
}

func concurrent(t *testing.T, e Engine) {
	a := e.Open(t, jobid.WithClock(at(t, "20261121", "12:00:00").Now))
	const n = 200
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { ids[i], errs[i] = a.Next(context.Background()) })
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, id := range ids {
		if errs[i] != nil {
			t.Fatalf("allocation failed: %v", errs[i])
		}
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
	}
	// Exactly 001..200: every number once, none from the fallback.
	for i := 1; i <= n; i++ {
		if id := fmt.Sprintf("job_20261121_%03d", i); !seen[id] {
			t.Fatalf("%s was not handed out", id)
		}
	}
}

func dayBoundary(t *testing.T, e Engine) {
	// 23:59:59 in Tokyo is still the 21st; one second later the counter starts again.
	clock := at(t, "20261121", "23:59:59")
	a := e.Open(t, jobid.WithClock(clock.Now))
	first, second := Next(t, a), Next(t, a)
	clock.Set(clock.Now().Add(time.Second))
	third := Next(t, a)
	if first != "job_20261121_001" || second != "job_20261121_002" || third != "job_20261122_001" {
		t.Fatalf("got %s %s %s", first, second, third)
	}
	// 2026-11-21 15:30 UTC is already the 22nd in Tokyo.
	clock.Set(time.Date(2026, 11, 21, 15, 30, 0, 0, time.UTC))
	if id := Next(t, a); id != "job_20261122_002" {
		t.Fatalf("UTC instant mapped to %s, want the Tokyo date", id)
	}
	// Back on the 21st (a clock set back), its counter goes on where it stopped.
	clock.Set(time.Date(2026, 11, 21, 10, 0, 0, 0, Tokyo(t)))
	if id := Next(t, a); id != "job_20261121_003" {
		t.Fatalf("the 21st again = %s, want its counter continued", id)
	}
}

func survivesReopen(t *testing.T, e Engine) {
	clock := jobid.WithClock(at(t, "20261121", "09:00:00").Now)
	a := e.Open(t, clock)
	for range 3 {
		Next(t, a)
	}
	b := e.Open(t, clock)
	if id := Next(t, b); id != "job_20261121_004" {
		t.Fatalf("after reopening: %s, want job_20261121_004", id)
	}
}

func counterExpires(t *testing.T, e Engine) {
	a := e.Open(t, jobid.WithClock(at(t, "20261121", "09:00:00").Now))
	Next(t, a)
	ttl := e.TTL(t, "20261121")
	if ttl <= jobid.CounterTTL-time.Hour || ttl > jobid.CounterTTL {
		t.Fatalf("counter lifetime %s, want about %s", ttl, jobid.CounterTTL)
	}
	// The lifetime is set by the day's first number, not renewed by later ones.
	Next(t, a)
	if again := e.TTL(t, "20261121"); again > ttl {
		t.Fatalf("lifetime renewed from %s to %s", ttl, again)
	}
	e.Expire(t, "20261121")
	if id := Next(t, a); id != "job_20261121_001" {
		t.Fatalf("after the counter expired: %s, want a new counter", id)
	}
	if ttl := e.TTL(t, "20261121"); ttl <= jobid.CounterTTL-time.Hour {
		t.Fatalf("the new counter lives %s, want about %s", ttl, jobid.CounterTTL)
	}
}

func fallback(t *testing.T, e Engine) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	a := e.Broken(t, jobid.WithClock(at(t, "20261121", "09:00:00").Now), jobid.WithLogger(log))
	id := Next(t, a)
	if len(id) != len("job_20261121_")+8 || !strings.HasPrefix(id, "job_20261121_") || !jobid.Valid(id) {
		t.Fatalf("fallback id %q", id)
	}
	if s := buf.String(); !strings.Contains(s, `"msg":"jobid.fallback"`) || !strings.Contains(s, id) {
		t.Fatalf("fallback not logged: %s", s)
	}
}

// Benchmark measures a's allocations one after another and from parallel goroutines.
func Benchmark(b *testing.B, a jobid.Allocator) {
	ctx := context.Background()
	b.Run("Sequential", func(b *testing.B) {
		for b.Loop() {
			if _, err := a.Next(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := a.Next(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
