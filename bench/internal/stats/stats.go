// Package stats summarises latency samples.
package stats

import (
	"math"
	"slices"
	"time"
)

// Summary describes a set of latency samples in milliseconds.
type Summary struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
	Mean  float64 `json:"mean_ms"`
}

// Summarize computes the summary; samples is not modified.
func Summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Summary{
		Count: len(s),
		P50:   ms(Percentile(s, 50)),
		P90:   ms(Percentile(s, 90)),
		P99:   ms(Percentile(s, 99)),
		Max:   ms(s[len(s)-1]),
		Mean:  ms(sum / time.Duration(len(s))),
	}
}

// Percentile returns the p-th percentile (nearest rank) of sorted samples.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

func ms(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}
