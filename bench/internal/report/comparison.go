package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Comparison is what the head of a comparison of two builds says: when and where it ran, which
// builds, how many rounds of what, and the settings each build ran with.
type Comparison struct {
	// What is compared: "embedded suite", "separate services".
	What                  string
	StartedAt             time.Time
	DurationSec           float64
	CPUs                  int
	LoadBefore, LoadAfter [3]float64
	A, B                  string
	Rounds                int
	// Each says what one round runs of each build.
	Each       string
	EnvA, EnvB []string
}

// ComparisonHead writes a comparison's title, its run line and the head of its table.
func ComparisonHead(w io.Writer, c Comparison) {
	fmt.Fprintf(w, "# PicoClaw Suite: build comparison (%s)\n\n", c.What)
	fmt.Fprintf(w, "Run %s, %.0f s, %d CPUs, load average before %.2f %.2f %.2f, after %.2f %.2f %.2f. ", c.StartedAt.Format(time.RFC3339),
		c.DurationSec, c.CPUs, c.LoadBefore[0], c.LoadBefore[1], c.LoadBefore[2], c.LoadAfter[0], c.LoadAfter[1], c.LoadAfter[2])
	fmt.Fprintf(w, "A = %s, B = %s; %d rounds (A then B, then B then A, alternating), each %s. "+
		"Medians of the rounds; ratio = B / A (below 1 is less).\n\n", c.A, c.B, c.Rounds, c.Each)
	for _, side := range []struct {
		name string
		env  []string
	}{{"A", c.EnvA}, {"B", c.EnvB}} {
		if len(side.env) > 0 {
			fmt.Fprintf(w, "%s runs with %s.\n\n", side.name, strings.Join(side.env, " "))
		}
	}
	fmt.Fprintf(w, "| figure | A | B | B / A |\n|---|---|---|---|\n")
}

// RatioRow writes one figure's row: A, B (in format) and B / A ("—" when A is 0).
func RatioRow(w io.Writer, name, format string, a, b float64) {
	ratio := "—"
	if a != 0 {
		ratio = fmt.Sprintf("%.2f", b/a)
	}
	fmt.Fprintf(w, "| %s | "+format+" | "+format+" | %s |\n", name, a, b, ratio)
}

// Median is the median of v (0 when empty); v is not modified.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Sorted(slices.Values(v))
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// RoundRatios are b[i] / a[i] for each round (rounds where a or b is 0 left out) and how many of
// them are below 1.
func RoundRatios(a, b []float64) (ratios []float64, lower int) {
	for i := range min(len(a), len(b)) {
		if a[i] == 0 || b[i] == 0 {
			continue
		}
		ratios = append(ratios, b[i]/a[i])
		if b[i] < a[i] {
			lower++
		}
	}
	return ratios, lower
}

// PerToolCPU is a CPU per message in units of the load tool's own in the same run (0 when the
// load tool's was not measured).
func PerToolCPU(cpu, tool float64) float64 {
	if tool <= 0 {
		return 0
	}
	return cpu / tool
}

// PerToolLine writes the round by round ratios of what's CPU per message in units of the load
// tool's own (PerToolCPU, RoundRatios), and why they carry.
func PerToolLine(w io.Writer, what string, ratios []float64, lower int) {
	fmt.Fprintf(w, "\n%s CPU per message in units of the load tool's own in the same run, B / A: %s (median %.2f; B lower in %d of %d "+
		"rounds). The load tool does the same work per message for either build, so this ratio holds where the machine's speed "+
		"moves between and within rounds, unless a build changes what it asks of the fakes (requests to the LINE API per answer, "+
		"connections).\n", what, joinRatios(ratios), Median(ratios), lower, len(ratios))
}
