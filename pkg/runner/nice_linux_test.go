package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// helperEnv makes the test binary, started again by a test, run lowerPriority in a process of
// its own (renicing the test process would slow every test after it) and print its threads' nice
// values.
const helperEnv = "PICOCLAW_RUNNER_NICE_HELPER"

func TestMain(m *testing.M) {
	if steps := os.Getenv(helperEnv); steps != "" {
		os.Exit(niceHelper(steps))
	}
	os.Exit(m.Run())
}

// niceHelper applies each nice value of steps ("12,7") in turn, then starts threads and prints
// the nice value of every thread of the process, one per line.
func niceHelper(steps string) int {
	for _, s := range strings.Split(steps, ",") {
		n, _ := strconv.Atoi(s)
		if err := lowerPriority(n); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	// Threads started after the change: each goroutine locked to a thread while the others wait
	// makes the runtime start new ones.
	var started, release sync.WaitGroup
	release.Add(1)
	for range 8 {
		started.Add(1)
		go func() {
			runtime.LockOSThread()
			started.Done()
			release.Wait()
		}()
	}
	started.Wait()
	nices, err := testinfra.ThreadNices(0)
	release.Done()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, n := range nices {
		fmt.Println(n)
	}
	return 0
}

func runNiceHelper(t *testing.T, steps string) []int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+steps)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v, %s", err, out)
	}
	var nices []int
	for _, l := range strings.Fields(string(out)) {
		n, err := strconv.Atoi(l)
		if err != nil {
			t.Fatalf("helper printed %q", out)
		}
		nices = append(nices, n)
	}
	if len(nices) < 9 {
		t.Fatalf("helper saw %d threads, want the main thread and 8 more: %v", len(nices), nices)
	}
	return nices
}

// ownNice is the nice value this test process runs at: the helper starts from it.
func ownNice(t *testing.T) int {
	t.Helper()
	nices, err := testinfra.ThreadNices(0)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Max(nices)
}

// Every thread runs at the new nice value, also the threads the runtime starts afterwards; and a
// process started at a lower priority than the service's default keeps it: the change only ever
// lowers the priority.
func TestLowerPriority(t *testing.T) {
	own := ownNice(t)
	for _, tc := range []struct {
		steps string
		want  int
	}{
		{steps: "7", want: max(own, 7)},
		{steps: "12,7", want: max(own, 12)},
	} {
		nices := runNiceHelper(t, tc.steps)
		for _, n := range nices {
			if n != tc.want {
				t.Fatalf("nice %s: a thread runs at nice %d, want %d: %v", tc.steps, n, tc.want, nices)
			}
		}
	}
}

func TestNiceFor(t *testing.T) {
	env := func(v string, set bool) func(string) (string, bool) {
		return func(k string) (string, bool) {
			if k != EnvNice {
				t.Fatalf("looked up %s", k)
			}
			return v, set
		}
	}
	for _, tc := range []struct {
		v       string
		set     bool
		def     int
		want    int
		wantErr bool
	}{
		{set: false, def: BehindNice, want: BehindNice},
		{v: "", set: true, def: BehindNice, want: BehindNice},
		{v: "0", set: true, def: BehindNice, want: 0},
		{v: "19", set: true, def: 0, want: 19},
		{v: "5", set: true, def: 0, want: 5},
		{v: "20", set: true, wantErr: true},
		{v: "-1", set: true, wantErr: true},
		{v: "low", set: true, wantErr: true},
	} {
		got, err := niceFor(tc.def, env(tc.v, tc.set))
		if (err != nil) != tc.wantErr || (err == nil && got != tc.want) {
			t.Errorf("%s=%q (set %v), default %d: got %d, %v; want %d, error %v", EnvNice, tc.v, tc.set, tc.def, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), EnvNice) {
			t.Errorf("error %q does not name %s", err, EnvNice)
		}
	}
}

// A bad PICOCLAW_NICE stops the service before it starts, naming the variable.
func TestMainRefusesABadNice(t *testing.T) {
	t.Setenv(EnvNice, "lowest")
	var stderr strings.Builder
	ran := false
	code := Main("svc", nil, &stderr, func(context.Context, string, []string) error { ran = true; return nil }, Behind)
	if code != 1 || ran || !strings.Contains(stderr.String(), EnvNice) {
		t.Fatalf("exit %d, ran %v, stderr %q", code, ran, stderr.String())
	}
}
