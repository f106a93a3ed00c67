package idlemem

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestDeciderReleasesWhenABusyPeriodEnds(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	d := decider{lastAt: t0, lastRelease: t0}
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	steps := []struct {
		cpu  time.Duration
		at   int
		want bool
		why  string
	}{
		{10 * time.Millisecond, 15, false, "idle, nothing happened since the first release"},
		{2 * time.Second, 30, false, "busy window (13 % of a core)"},
		{3 * time.Second, 45, false, "still busy"},
		{3*time.Second + 20*time.Millisecond, 60, true, "the first idle window after a busy one"},
		{3*time.Second + 40*time.Millisecond, 75, true, "the second idle window: once more (the stacks the first shrank)"},
		{3*time.Second + 60*time.Millisecond, 90, false, "idle again: released twice already"},
		{3*time.Second + 210*time.Millisecond, 105, false, "exactly 1 % is not idle"},
		{3*time.Second + 220*time.Millisecond, 120, true, "idle after that"},
		{3*time.Second + 230*time.Millisecond, 135, true, "and once more"},
	}
	for _, s := range steps {
		if got := d.observe(s.cpu, at(s.at)); got != s.want {
			t.Fatalf("at %ds (%s): release %v, want %v", s.at, s.why, got, s.want)
		}
	}
	// A process that stays idle is released again only after quietRelease.
	last := 135
	for s := last + 15; s < last+int(quietRelease/time.Second); s += 15 {
		if d.observe(3*time.Second+230*time.Millisecond, at(s)) {
			t.Fatalf("released again at %ds while nothing happened", s)
		}
	}
	if !d.observe(3*time.Second+230*time.Millisecond, at(last+int(quietRelease/time.Second))) {
		t.Fatal("not released after quietRelease")
	}
}

func TestDeciderTreatsAClockThatDidNotMoveAsBusy(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	d := decider{lastAt: t0, lastRelease: t0.Add(-time.Hour)}
	if d.observe(0, t0) {
		t.Fatal("released on a zero-length window")
	}
}

func TestHeapSamplingIsOffUntilAProfileIsAskedFor(t *testing.T) {
	if runtime.MemProfileRate != 0 {
		t.Fatalf("heap sampling at start: one per %d bytes, want off", runtime.MemProfileRate)
	}
	t.Cleanup(func() { runtime.MemProfileRate = 0 })
	SampleHeap()
	if runtime.MemProfileRate != heapSampleRate {
		t.Fatalf("after SampleHeap: %d", runtime.MemProfileRate)
	}
}

func TestLimitLeavesGOMEMLIMITToTheOperator(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	t.Setenv("GOMEMLIMIT", "64MiB")
	debug.SetMemoryLimit(64 << 20)
	Limit(SuiteLimit)
	if got := debug.SetMemoryLimit(-1); got != 64<<20 {
		t.Fatalf("limit %d with GOMEMLIMIT set, want the operator's 64 MiB", got)
	}
	os.Unsetenv("GOMEMLIMIT")
	Limit(SuiteLimit)
	if got := debug.SetMemoryLimit(-1); got != SuiteLimit {
		t.Fatalf("limit %d without GOMEMLIMIT, want %d", got, SuiteLimit)
	}
}

func TestTrimmerTrimsIdleLooksAfterWork(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	tr := trimmer{lastAt: t0}
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	steps := []struct {
		cpu  time.Duration
		at   int
		want bool
		why  string
	}{
		{0, 2000, false, "nothing ran: nothing was mapped"},
		{5 * time.Millisecond, 4000, true, "a heartbeat's 5 ms in 2 s (0.25 %): trim"},
		{5 * time.Millisecond, 6000, false, "nothing ran since the trim"},
		{505 * time.Millisecond, 8000, false, "busy (25 %)"},
		{525 * time.Millisecond, 10000, false, "exactly 1 % is not idle"},
		{526 * time.Millisecond, 12000, true, "idle after work: trim"},
		{526 * time.Millisecond, 12000, false, "a look of zero length"},
	}
	for _, s := range steps {
		if got := tr.observe(s.cpu, at(s.at)); got != s.want {
			t.Fatalf("at %d ms (%s): trim %v, want %v", s.at, s.why, got, s.want)
		}
	}
}

func TestGCPercentLeavesGOGCToTheOperator(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	GCPercent(ServiceGCPercent)
	if got := debug.SetGCPercent(50); got != 50 {
		t.Fatalf("GC percent %d with GOGC set, want the operator's 50", got)
	}
	os.Unsetenv("GOGC")
	GCPercent(ServiceGCPercent)
	if got := debug.SetGCPercent(100); got != ServiceGCPercent {
		t.Fatalf("GC percent %d without GOGC, want %d", got, ServiceGCPercent)
	}
}
