package idlemem

import (
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"
)

func TestDeciderReleasesWhenABusyPeriodEnds(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	const window = 20 * time.Second
	d := decider{window: window, lastAt: t0, lastRelease: t0}
	now, cpu := t0, time.Duration(0)
	// look advances one second in which the process used share of a core, and says whether
	// the decider released at its end.
	look := func(share float64) bool {
		now = now.Add(time.Second)
		cpu += time.Duration(share * float64(time.Second))
		return d.observe(cpu, now)
	}
	// looks runs n looks at share and returns the seconds (1-based) at which it released.
	looks := func(n int, share float64) []int {
		var at []int
		for i := 1; i <= n; i++ {
			if look(share) {
				at = append(at, i)
			}
		}
		return at
	}
	if got := looks(60, 0.005); len(got) != 0 {
		t.Fatalf("released at %v while idle since the first release", got)
	}
	if got := looks(30, 1.5); len(got) != 0 {
		t.Fatalf("released at %v during a burst", got)
	}
	// After the burst the suite's own upkeep (2 % of a core) is still quiet: a release after a
	// window of it, and once more after the next one.
	if got := looks(60, 0.02); !slices.Equal(got, []int{20, 40}) {
		t.Fatalf("after the burst released at %v, want 20 and 40", got)
	}
	// A second of 20 % of a core is busy and starts the window again; single seconds of a few
	// per cent (a sweep) are not, as long as the window stays under 3 % of a core.
	if got := looks(10, 0.005); len(got) != 0 {
		t.Fatalf("released at %v", got)
	}
	if look(0.20) {
		t.Fatal("released on a busy look")
	}
	for i := 1; i <= 25; i++ {
		share := 0.01
		if i%5 == 0 {
			share = 0.07
		}
		if look(share) != (i == 20) {
			t.Fatalf("after a busy second: release at the %dth quiet second is %v, want one at the 20th only", i, !(i == 20))
		}
	}
	// A window of 3 % of a core or more is busy too: the release waits until the last 20 s
	// average under it. 14 seconds at 4 % and 6 at 0.5 % are the first such window.
	if got := looks(20, 0.04); len(got) != 0 {
		t.Fatalf("released at %v over a window at 4 %% of a core", got)
	}
	if got := looks(40, 0.005); !slices.Equal(got, []int{6, 26}) {
		t.Fatalf("released at %v, want at the 6th idle second and 20 s later", got)
	}
	// A trickle that never reaches 20 % of a core in a second holds no release, not even the
	// one every quietRelease, and its end is followed by one like a burst's: 15 idle seconds
	// bring the last 20 s under 3 %.
	if got := looks(int(2*quietRelease/time.Second), 0.10); len(got) != 0 {
		t.Fatalf("released at %v during a trickle at 10 %% of a core", got)
	}
	if n := len(d.recent); n > int(window/time.Second)+1 {
		t.Fatalf("%d looks kept through the trickle, more than a window's", n)
	}
	if got := looks(40, 0.005); !slices.Equal(got, []int{15, 35}) {
		t.Fatalf("after the trickle released at %v, want at 15 and 35", got)
	}
	// A burst's last seconds do not count toward the window.
	if got := looks(5, 1.0); len(got) != 0 {
		t.Fatalf("released at %v during a burst", got)
	}
	if got := looks(19, 0.0); len(got) != 0 {
		t.Fatalf("released at %v before a whole window of quiet", got)
	}
	if !look(0) {
		t.Fatal("not released a window after the burst")
	}
	// A process that stays quiet is released again once more, then only after quietRelease.
	if got := looks(20, 0); !slices.Equal(got, []int{20}) {
		t.Fatalf("quiet process released at %v, want once more at 20", got)
	}
	if got := looks(int(quietRelease/time.Second)-1, 0); len(got) != 0 {
		t.Fatalf("quiet process released again at %v", got)
	}
	if !look(0) {
		t.Fatal("not released after quietRelease")
	}
}

// Looks of uneven length: the window is the newest looks that cover it, the long one included.
func TestDeciderWindowCoversUnevenLooks(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	d := decider{window: 20 * time.Second, lastAt: t0, lastRelease: t0}
	now, cpu := t0, time.Duration(0)
	look := func(d0 time.Duration, used time.Duration) bool {
		now, cpu = now.Add(d0), cpu+used
		return d.observe(cpu, now)
	}
	if look(time.Second, time.Second) {
		t.Fatal("released on a busy look")
	}
	if look(10*time.Second, 0) {
		t.Fatal("released before a whole window")
	}
	for i := range 10 {
		if look(time.Second, 60*time.Millisecond) {
			t.Fatalf("released at the %dth second at 6 %% (the window holds 0.6 s in 20 s: 3 %%)", i+1)
		}
	}
	// The newest 21 s (1 s idle, ten at 6 %, the 10 s look) hold 0.6 s: under 3 %.
	if !look(time.Second, 0) {
		t.Fatal("not released once the window, the 10 s look included, fell under 3 %")
	}
}

func TestDeciderTreatsAClockThatDidNotMoveAsBusy(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	d := decider{window: time.Second, lastAt: t0, lastRelease: t0}
	if d.observe(0, t0) || !d.busy {
		t.Fatalf("a zero-length look: released or not busy (busy %v)", d.busy)
	}
	if !d.observe(0, t0.Add(time.Second)) {
		t.Fatal("not released a quiet window after it")
	}
}

// A CPU reading that went back (getrusage failed and read 0) is busy, not a negative use
// that would make the window look quieter than it was.
func TestDeciderTreatsCPUGoingBackAsBusy(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	d := decider{window: 2 * time.Second, lastCPU: time.Hour, lastAt: t0, lastRelease: t0}
	if d.observe(0, t0.Add(time.Second)) || !d.busy || len(d.recent) != 0 {
		t.Fatalf("a reading that went back: busy %v, %d looks kept", d.busy, len(d.recent))
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
