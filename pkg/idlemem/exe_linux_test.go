//go:build linux

package idlemem

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseMapsPicksTheExecutablesReadOnlyMappings(t *testing.T) {
	maps := `00400000-01258000 r-xp 00000000 fe:00 9981953                            /opt/pico claw/bin/picoclaw
01258000-02349000 r--p 00e58000 fe:00 9981953                            /opt/pico claw/bin/picoclaw
02349000-023f7000 rw-p 01f49000 fe:00 9981953                            /opt/pico claw/bin/picoclaw
023f7000-02460000 rw-p 00000000 00:00 0
c000000000-c000400000 rw-p 00000000 00:00 0
7f0000000000-7f0000001000 r--p 00000000 fe:00 42                         /opt/pico claw/bin/picoclaw-other
7ffd77393000-7ffd773b4000 rw-p 00000000 00:00 0                          [stack]
`
	got, err := parseMaps(bufio.NewScanner(strings.NewReader(maps)), "/opt/pico claw/bin/picoclaw")
	if err != nil {
		t.Fatal(err)
	}
	want := []addrRange{{0x400000, 0x1258000}, {0x1258000, 0x2349000}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("ranges %x, want %x", got, want)
	}
}

// TestReleaseDropsTheExecutablesPages: after Release, less of this test binary is resident than
// before (the pages it needs afterwards come back one by one).
func TestReleaseDropsTheExecutablesPages(t *testing.T) {
	ranges, err := executableRanges("/proc/self/maps")
	if err != nil || len(ranges) == 0 {
		t.Fatalf("executable mappings: %v %v", ranges, err)
	}
	before := residentExecutableKB(t)
	Release()
	after := residentExecutableKB(t)
	t.Logf("executable resident: %d kB before, %d kB after", before, after)
	if after >= before {
		t.Fatalf("nothing released: %d kB before, %d kB after", before, after)
	}
	// A second release after the process ran again drops again what it mapped back.
	runtime.GC()
	again := residentExecutableKB(t)
	Release()
	if last := residentExecutableKB(t); again > 0 && last >= again {
		t.Fatalf("the second release left %d of %d kB", last, again)
	}
}

// residentExecutableKB sums the Rss of the executable's mappings in /proc/self/smaps.
func residentExecutableKB(t *testing.T) int {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in, total := false, 0
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = strings.HasSuffix(line, exe)
			continue
		}
		if in && len(fields) == 3 && fields[0] == "Rss:" {
			n, _ := strconv.Atoi(fields[1])
			total += n
		}
	}
	return total
}

// TestTrimUnmapsWhatTheProcessRanAgain: pages mapped back by work after a Release are unmapped
// by Trim.
func TestTrimUnmapsWhatTheProcessRanAgain(t *testing.T) {
	Release()
	// Work that maps code back: a collection, formatting, parsing.
	runtime.GC()
	for i := range 1000 {
		_ = strconv.Quote(strings.Repeat("x", i%17)) + strconv.FormatFloat(float64(i)/7, 'g', -1, 64)
	}
	mapped := residentExecutableKB(t)
	Trim()
	trimmed := residentExecutableKB(t)
	t.Logf("executable resident: %d kB before the trim, %d kB after", mapped, trimmed)
	if trimmed >= mapped {
		t.Fatalf("nothing unmapped: %d kB before, %d kB after", mapped, trimmed)
	}
}

// TestSettleTrimsAfterTheLastCallOfARound: Settle does nothing before Keep's first release;
// after it, the calls of one round share one trim, settleDelay after the last.
func TestSettleTrimsAfterTheLastCallOfARound(t *testing.T) {
	defer kept.Store(false)
	kept.Store(false)
	settles.Store(0)
	Settle()
	time.Sleep(4 * settleDelay)
	if settles.Load() != 0 {
		t.Fatal("Settle trimmed in a process that does not Keep")
	}
	kept.Store(true)
	runtime.GC()
	mapped := residentExecutableKB(t)
	for range 5 {
		Settle()
		time.Sleep(settleDelay / 5)
	}
	deadline := time.Now().Add(5 * time.Second)
	for settles.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(settleDelay)
	}
	if n := settles.Load(); n != 1 {
		t.Fatalf("%d trims for one round of five calls, want 1", n)
	}
	if trimmed := residentExecutableKB(t); trimmed >= mapped {
		t.Fatalf("Settle left %d of %d kB", trimmed, mapped)
	}
}
