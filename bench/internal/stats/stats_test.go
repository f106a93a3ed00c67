package stats

import (
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	tests := []struct {
		p    float64
		want time.Duration
	}{
		{50, 50 * time.Millisecond},
		{99, 99 * time.Millisecond},
		{100, 100 * time.Millisecond},
		{0, 1 * time.Millisecond},
		{0.5, 1 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := Percentile(s, tt.p); got != tt.want {
			t.Errorf("Percentile(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("empty = %v", got)
	}
}

func TestSummarizeDoesNotReorderInput(t *testing.T) {
	in := []time.Duration{3 * time.Millisecond, 1 * time.Millisecond, 2*time.Millisecond + 500*time.Microsecond}
	got := Summarize(in)
	want := Summary{Count: 3, P50: 2.5, P90: 3, P99: 3, Max: 3, Mean: 2.167}
	if got != want {
		t.Fatalf("Summarize = %+v, want %+v", got, want)
	}
	if in[0] != 3*time.Millisecond {
		t.Fatal("input was sorted in place")
	}
	if (Summarize(nil) != Summary{}) {
		t.Fatal("empty summary not zero")
	}
}

// Five start-up runs: p50 is the third fastest (the median), max the slowest.
func TestSummarizeFiveRuns(t *testing.T) {
	runs := []time.Duration{95 * time.Millisecond, 70 * time.Millisecond, 120 * time.Millisecond, 68 * time.Millisecond, 99 * time.Millisecond}
	got := Summarize(runs)
	if got.Count != 5 || got.P50 != 95 || got.Max != 120 {
		t.Fatalf("Summarize = %+v, want p50 95 ms, max 120 ms", got)
	}
}
