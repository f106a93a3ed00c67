package idlemem

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for Keep: the first release a few seconds after the start (when the service is ready),
// then a release once the process has been quiet for a window.
const (
	DefaultFirst  = 2 * time.Second
	DefaultWindow = 20 * time.Second
	// idleShare is the share of one core below which a look counts as idle for a trim.
	idleShare = 0.01
	// A release waits for a quiet window: no look of busyShare of a core or more, and less than
	// releaseShare of a core over the last window. The idle suite's own upkeep (its sweeps and
	// polls, the page faults after a trim) takes 0.4–1.5 % of a core on a slow machine, with
	// single seconds of up to 7 %; a window under 1 % of a core, the rule before, was often not
	// reached after a burst on a slow machine, and the heap the burst grew stayed. A window of
	// releaseShare or more (a trickle of work) counts as busy too, so its end is followed by a
	// release like a burst's.
	busyShare    = 0.20
	releaseShare = 0.03
	// quietRelease is how often an idle process that did nothing since is released again anyway
	// (the runtime's own scavenger is slow to return a heap that grew under a trickle of work).
	quietRelease = 5 * time.Minute
	// TrimEvery is how often an idle process unmaps the executable pages its periodic work (a
	// heartbeat, a sweep) mapped since the last look: they stay in the page cache, so the next
	// round maps them back without a read.
	TrimEvery = time.Second
)

var (
	started atomic.Bool
	// kept: Keep made its first release (the executable is read page by page from then on).
	kept atomic.Bool

	settleMu    sync.Mutex
	settleTimer *time.Timer
	// settles counts the trims Settle scheduled that ran.
	settles atomic.Int64
)

// settleDelay is how long after the last Settle the trim runs: the rounds of periodic work that
// end together (every service's heartbeat) share one.
const settleDelay = 50 * time.Millisecond

// Settle says that a round of periodic work (a heartbeat, a sweep) has ended: the executable's
// pages it mapped are unmapped (Trim) settleDelay after the last such call, so an idle process
// does not keep them until the next look. It does nothing in a process that does not Keep.
func Settle() {
	if !kept.Load() {
		return
	}
	settleMu.Lock()
	defer settleMu.Unlock()
	if settleTimer == nil {
		settleTimer = time.AfterFunc(settleDelay, func() {
			Trim()
			settles.Add(1)
		})
		return
	}
	settleTimer.Reset(settleDelay)
}

// Keep releases memory until ctx ends: first after first, then once the process has been quiet
// for window (no look, every TrimEvery, of 20 % of a core or more, and less than 3 % of a core
// over the window) after busier work, and once more after another quiet window (or
// quietRelease after the last release); in between, after every look of less than 1 % of a core
// that follows work since the last trim, it unmaps the executable's pages (Trim). A burst thus
// ends in releases about a window and two windows after it, not in its last seconds. Only the
// first call in a process does anything (an embedded suite runs every service in one process).
func Keep(ctx context.Context, first, window time.Duration) {
	if !started.CompareAndSwap(false, true) {
		return
	}
	t := time.NewTimer(first)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return
	case <-t.C:
	}
	Release()
	kept.Store(true)
	now := time.Now()
	cpu := processCPU()
	d := decider{window: window, lastCPU: cpu, lastAt: now, lastRelease: now}
	trim := trimmer{lastCPU: cpu, lastAt: now}
	tick := time.NewTicker(TrimEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			cpu, now := processCPU(), time.Now()
			if d.observe(cpu, now) {
				Release()
				// The release's own CPU is not the process's work, and the next look is a whole
				// TrimEvery after it (a tick that came due during a slow release would make a look
				// too short to tell busy from quiet).
				cpu, now = processCPU(), time.Now()
				d.lastCPU, d.lastAt = cpu, now
				tick.Reset(TrimEvery)
			}
			if trim.observe(cpu, now) {
				Trim()
			}
		}
	}
}

// trimmer decides the trims: at the end of a look of less than 1 % of a core, when the process
// used any CPU since the last trim (an idle process that ran nothing mapped nothing).
type trimmer struct {
	lastCPU time.Duration
	lastAt  time.Time
	// ran: CPU was used since the last trim.
	ran bool
}

func (t *trimmer) observe(cpu time.Duration, now time.Time) bool {
	used, elapsed := cpu-t.lastCPU, now.Sub(t.lastAt)
	t.lastCPU, t.lastAt = cpu, now
	if used > 0 {
		t.ran = true
	}
	if elapsed <= 0 || float64(used) >= idleShare*float64(elapsed) || !t.ran {
		return false
	}
	t.ran = false
	return true
}

// Trim unmaps the executable's pages from the process and leaves them in the page cache: what an
// idle process's periodic work ran is not kept resident between its rounds, and the next round
// maps it back from the cache page by page.
func Trim() { unmapExecutable() }

// Release hands the free heap back and the executable's pages: they are unmapped and leave the
// page cache, so what the process runs next is read back page by page — in the page cache, a
// fault maps a whole 64 KB neighbourhood of the page it needs (fault-around), and the idle suite
// would soon map again most of what a burst ran.
func Release() {
	// Each collection shrinks the stack of a goroutine that uses less than a quarter of it by
	// half; a burst grows the stacks of the long-lived goroutines that served it (SQLite's
	// frames are large), so two collections come before the one that hands the heap back.
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	releaseExecutable()
}

// decider is the release rule, apart from clocks and timers: it is shown the process's CPU
// time at every look.
type decider struct {
	// window is how long the process must have been quiet before a release.
	window      time.Duration
	lastCPU     time.Duration
	lastAt      time.Time
	lastRelease time.Time
	// recent is the looks since the last busy one or release, newest last, cut to the last
	// window's.
	recent []look
	busy   bool
	// again: release once more after the next quiet window — the first release's collection
	// shrinks the stacks a burst grew, the second hands their memory back.
	again bool
}

// look is the CPU a process used over one look's elapsed time.
type look struct{ used, elapsed time.Duration }

// observe takes the process CPU at now and says whether to release.
func (d *decider) observe(cpu time.Duration, now time.Time) bool {
	used, elapsed := cpu-d.lastCPU, now.Sub(d.lastAt)
	d.lastCPU, d.lastAt = cpu, now
	// A clock that did not move or a CPU reading that went back (a failed read) counts as busy.
	if elapsed <= 0 || used < 0 || float64(used) >= busyShare*float64(elapsed) {
		d.busy, d.recent = true, d.recent[:0]
		return false
	}
	d.recent = append(d.recent, look{used, elapsed})
	var span, spent time.Duration
	for i := len(d.recent) - 1; i >= 0; i-- {
		span += d.recent[i].elapsed
		spent += d.recent[i].used
		if span >= d.window {
			d.recent = append(d.recent[:0], d.recent[i:]...)
			break
		}
	}
	if span < d.window {
		return false
	}
	if float64(spent) >= releaseShare*float64(span) {
		d.busy = true
		return false
	}
	if d.busy || d.again || now.Sub(d.lastRelease) >= quietRelease {
		d.again = d.busy
		d.busy, d.recent = false, d.recent[:0]
		d.lastRelease = now
		return true
	}
	return false
}

// heapSampleRate is the runtime's default rate of heap profile samples (one per 512 KiB).
const heapSampleRate = 512 * 1024

// Heap profiling is off unless a profile is asked for: its sampling costs CPU on every
// allocation path and its bucket table a megabyte or more of resident memory. The runtime
// samples from its own start, so this runs at package initialisation, before the services do.
func init() { runtime.MemProfileRate = 0 }

// SampleHeap turns heap profile sampling on (debug.pprof): profiles cover allocations from then on.
func SampleHeap() { runtime.MemProfileRate = heapSampleRate }

// SuiteLimit is the embedded suite's soft memory limit (see Limit): twice what the idle suite
// holds. A burst's garbage is then collected before the heap doubles, which keeps the suite
// within 40 MB of resident memory during a burst at a few percent more GC work; the limit is
// soft, so a larger live heap only makes collections more frequent, never fails an allocation.
const SuiteLimit = 22 << 20

// ServiceGCPercent is the separate services' collector target (GOGC): the heap grows to three
// times what is live before a collection instead of twice. A service's live heap is a few
// megabytes, so this costs a few megabytes under load (gateway-line 28 → 36 MB in the load tool)
// and nothing idle (Keep hands the free heap back), for 0.85× the CPU per message and fewer
// collections in the webhook's way (docs/performance.md).
const ServiceGCPercent = 200

// GCPercent sets the collector's target to percent unless the operator set GOGC, which wins.
func GCPercent(percent int) {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(percent)
	}
}

// Limit sets the Go runtime's soft memory limit to limit unless the operator set GOMEMLIMIT,
// which wins.
func Limit(limit int64) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(limit)
	}
}
