package inbox

import (
	"strconv"
	"testing"
	"time"
)

func TestCompareIDs(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1-0", "1-0", 0},
		{"1-0", "1-1", -1},
		{"2-0", "10-0", -1}, // numeric, not lexical
		{"10-5", "10-4", 1},
		{"1700000000000-9", "1700000000001-0", -1},
	} {
		if got := compareIDs(tc.a, tc.b); got != tc.want {
			t.Errorf("compareIDs(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		attempt int
		want    time.Duration
	}{{1, 100 * time.Millisecond}, {2, 200 * time.Millisecond}, {3, 400 * time.Millisecond}, {10, time.Second}} {
		if got := backoff(100*time.Millisecond, time.Second, tc.attempt); got != tc.want {
			t.Errorf("backoff(%d) = %v, want %v", tc.attempt, got, tc.want)
		}
	}
}

// Entries waiting out a backoff are retried as soon as Redis answers again.
func TestRecoveryWakesBackoff(t *testing.T) {
	c := &Consumer{wake: make(chan struct{})}
	done := make(chan bool, 1)
	start := time.Now()
	go func() { done <- c.sleepOrWake(t.Context(), time.Minute) }()
	time.Sleep(20 * time.Millisecond)
	c.recovered()
	select {
	case ok := <-done:
		if !ok || time.Since(start) > 10*time.Second {
			t.Fatalf("woke %v after %v", ok, time.Since(start))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("backoff not cut short by recovery")
	}
	// The next wait is a fresh one.
	if ok := c.sleepOrWake(t.Context(), 10*time.Millisecond); !ok {
		t.Fatal("sleep failed")
	}
}

func TestEntryAge(t *testing.T) {
	id := strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10) + "-0"
	if a := entryAge(id); a < 59*time.Minute || a > 61*time.Minute {
		t.Fatalf("age %v", a)
	}
	if entryAge("bogus") != 0 {
		t.Fatal("unparsable id has an age")
	}
}
