package jobid

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// memCounter is a counter in memory: draws counts every draw, down makes it unreachable.
type memCounter struct {
	mu    sync.Mutex
	n     map[string]int64
	draws int
	down  bool
}

func (c *memCounter) Incr(_ context.Context, day string, n int64) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.draws++
	if c.down {
		return 0, errors.New("counter unreachable")
	}
	if c.n == nil {
		c.n = map[string]int64{}
	}
	c.n[day] += n
	return c.n[day], nil
}

func (c *memCounter) set(f func(c *memCounter)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
}

// settled waits for the background draw under way.
func settled(a *Ahead) {
	a.draws.Wait()
}

func tokyo(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestAheadHandsOutTheDrawnID: the first id is drawn in the foreground and the next one ahead;
// ids come in order, each once, each from the counter. Taken as fast as they come, the draws grow
// into blocks (1, 2, 4 … MaxBlock ids); taken slowly, one id is drawn at a time.
func TestAheadHandsOutTheDrawnID(t *testing.T) {
	for _, tc := range []struct {
		name  string
		every time.Duration
		ids   int
		draws int
	}{
		{"fast", 0, 40, 7}, // 1 in the foreground, then 1, 2, 4, 8, 16 and 16 ahead
		{"slow", BlockFill, 5, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &memCounter{}
			a, advance := aheadOn(t, c, time.Date(2026, 11, 29, 10, 0, 0, 0, tokyo(t)))
			for i := range tc.ids {
				want := fmt.Sprintf("job_20261129_%03d", i+1)
				got, err := a.Next(t.Context())
				if err != nil || got != want {
					t.Fatalf("id %d = %q, %v; want %s", i+1, got, err, want)
				}
				settled(a)
				advance(tc.every)
			}
			if c.draws != tc.draws {
				t.Fatalf("%d draws for %d ids, want %d", c.draws, tc.ids, tc.draws)
			}
		})
	}
}

// TestAheadBlockShrinksWhenLeftUnused: a block that grew under load and is then left to age is
// dropped, and the next draw takes one id again.
func TestAheadBlockShrinksWhenLeftUnused(t *testing.T) {
	c := &memCounter{}
	a, advance := aheadOn(t, c, time.Date(2026, 11, 29, 10, 0, 0, 0, tokyo(t)))
	takeIDs(t, a, advance, 4, 0) // 001 … 004; 005 … 008 are drawn ahead
	advance(MaxSpareAge + time.Second)
	if got, _ := a.Next(t.Context()); got != "job_20261129_009" {
		t.Fatalf("id after the block aged = %s, want job_20261129_009", got)
	}
	settled(a)
	if a.last-a.next+1 != 1 {
		t.Fatalf("drew %d ids ahead after a block went unused, want 1", a.last-a.next+1)
	}
}

// TestAheadBlockShrinksWhenUsedSlowly: a block used up, but more slowly than BlockFill, makes the
// next one half as large.
func TestAheadBlockShrinksWhenUsedSlowly(t *testing.T) {
	c := &memCounter{}
	a, advance := aheadOn(t, c, time.Date(2026, 11, 29, 10, 0, 0, 0, tokyo(t)))
	takeIDs(t, a, advance, 8, 0)           // 001 … 008; 009 … 016 are drawn ahead
	takeIDs(t, a, advance, 8, BlockFill/4) // 009 … 016, over more than BlockFill
	if held := a.last - a.next + 1; held != 4 {
		t.Fatalf("drew %d ids ahead after a block of 8 was used up slowly, want 4", held)
	}
}

// aheadOn is an Ahead over c whose clock stands at start until advance moves it; it is waited
// for at the test's end.
func aheadOn(t *testing.T, c Counter, start time.Time) (a *Ahead, advance func(time.Duration)) {
	var mu sync.Mutex
	now := start
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	a = NewAhead(t.Context(), NewDaily(c, tokyo(t), WithClock(clock)))
	t.Cleanup(a.Wait)
	return a, func(d time.Duration) {
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
	}
}

// takeIDs takes n ids from a, the clock moved by every before each, each background draw
// awaited.
func takeIDs(t *testing.T, a *Ahead, advance func(time.Duration), n int, every time.Duration) {
	t.Helper()
	for range n {
		advance(every)
		if _, err := a.Next(t.Context()); err != nil {
			t.Fatal(err)
		}
		settled(a)
	}
}

// aheadOnClock is aheadOn over a counter in memory.
func aheadOnClock(t *testing.T, start time.Time) (a *Ahead, advance func(time.Duration)) {
	return aheadOn(t, &memCounter{}, start)
}

// TestAheadDropsYesterdaysID: an id drawn ahead on one day is not handed out on the next.
func TestAheadDropsYesterdaysID(t *testing.T) {
	a, advance := aheadOnClock(t, time.Date(2026, 11, 29, 23, 59, 59, 0, tokyo(t)))
	if got, _ := a.Next(t.Context()); got != "job_20261129_001" {
		t.Fatalf("first id %s", got)
	}
	settled(a) // job_20261129_002 is drawn ahead
	advance(2 * time.Second)
	if got, _ := a.Next(t.Context()); got != "job_20261130_001" {
		t.Fatalf("first id of the next day = %s, want job_20261130_001", got)
	}
	settled(a)
	if got, _ := a.Next(t.Context()); got != "job_20261130_002" {
		t.Fatalf("second id of the next day = %s, want job_20261130_002", got)
	}
}

// TestAheadDropsAnOldID: an id held longer than MaxSpareAge is not handed out (after a loss of
// the counter, the floor that reseeds it does not know an id that never reached a job).
func TestAheadDropsAnOldID(t *testing.T) {
	a, advance := aheadOnClock(t, time.Date(2026, 11, 29, 10, 0, 0, 0, tokyo(t)))
	for _, step := range []struct {
		wait time.Duration
		want string
	}{
		{0, "job_20261129_001"},                         // drawn in the foreground; 002 ahead
		{MaxSpareAge, "job_20261129_002"},               // just young enough; 003 ahead
		{MaxSpareAge + time.Second, "job_20261129_004"}, // 003 dropped; 005 ahead
		{time.Second, "job_20261129_005"},
	} {
		advance(step.wait)
		if got, err := a.Next(t.Context()); err != nil || got != step.want {
			t.Fatalf("after %s: %q, %v; want %s", step.wait, got, err, step.want)
		}
		settled(a)
	}
}

// TestAheadNeverDrawsTheFallback: with the counter down, nothing is drawn ahead; Next falls back
// in the foreground, and once the counter is back, ids come from it again.
func TestAheadNeverDrawsTheFallback(t *testing.T) {
	c := &memCounter{down: true}
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, tokyo(t))
	a := NewAhead(t.Context(), NewDaily(c, tokyo(t), WithClock(func() time.Time { return now })))
	defer a.Wait()
	for range 2 {
		got, err := a.Next(t.Context())
		if err != nil || !Valid(got) || !strings.HasPrefix(got, "job_20261129_") || len(got) != len("job_20261129_")+8 {
			t.Fatalf("id with the counter down = %q, %v; want the fallback form", got, err)
		}
		settled(a)
	}
	c.set(func(c *memCounter) { c.down = false })
	if got, _ := a.Next(t.Context()); got != "job_20261129_001" {
		t.Fatalf("id once the counter is back = %s, want job_20261129_001", got)
	}
}

// TestAheadConcurrent: ids handed out at the same time are distinct, whether taken from the
// spare, drawn in the foreground while a background draw waits, or drawn in the background.
func TestAheadConcurrent(t *testing.T) {
	c := &memCounter{}
	a := NewAhead(t.Context(), NewDaily(c, tokyo(t)))
	defer a.Wait()
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
		wg   sync.WaitGroup
	)
	for range 16 {
		wg.Go(func() {
			for range 50 {
				id, err := a.Next(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[id] {
					t.Errorf("%s handed out twice", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 800 {
		t.Fatalf("%d distinct ids, want 800", len(seen))
	}
}

// TestAheadWait: Wait returns once the draw under way has ended and no draw starts after it;
// Next still answers, in the foreground. A draw also ends with life.
func TestAheadWait(t *testing.T) {
	c := &memCounter{}
	a := NewAhead(t.Context(), NewDaily(c, tokyo(t)))
	if _, err := a.Next(t.Context()); err != nil {
		t.Fatal(err)
	}
	a.Wait()
	drawn := c.draws
	if drawn != 2 {
		t.Fatalf("%d draws before Wait returned, want 2 (the id handed out and the one ahead)", drawn)
	}
	for range 3 {
		if _, err := a.Next(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if c.draws != drawn+2 {
		t.Fatalf("%d draws after Wait, want %d: the spare, then two in the foreground and none ahead", c.draws, drawn+2)
	}

	ended, stop := context.WithCancel(t.Context())
	stop()
	b := NewAhead(ended, NewDaily(&memCounter{}, tokyo(t)))
	if _, err := b.Next(t.Context()); err != nil {
		t.Fatal(err)
	}
	b.Wait()
	if b.next <= b.last {
		t.Fatalf("drew %d … %d ahead after its life ended", b.next, b.last)
	}
}
