package inbox

import (
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
