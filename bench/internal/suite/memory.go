package suite

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Memory is a process's resident memory from /proc/<pid>/status, in bytes.
type Memory struct {
	// RSS is VmRSS; Anon and File split it into private memory (heap, stacks) and pages of
	// the mapped binary; Peak is VmHWM.
	RSS, Anon, File, Peak int64
}

// ReadMemory reads the resident memory of pid from /proc/<pid>/status.
func ReadMemory(pid int) (Memory, error) {
	var m Memory
	err := readKB("/proc/"+strconv.Itoa(pid)+"/status", map[string]*int64{
		"VmRSS": &m.RSS, "RssAnon": &m.Anon, "RssFile": &m.File, "VmHWM": &m.Peak,
	})
	return m, err
}

// Proportional is a process's memory from /proc/<pid>/smaps_rollup, in bytes: what it costs
// the machine when pages are shared with other processes.
type Proportional struct {
	// PSS charges each shared page to its sharers in equal parts; PSSAnon and PSSFile split it.
	PSS, PSSAnon, PSSFile int64
	// USS (unique set size) is the memory only this process maps: what its end would free
	// (Private_Clean + Private_Dirty).
	USS int64
	// FilePMD is file-backed memory mapped in 2 MB huge pages (FilePmdMapped): with large
	// folios in the page cache, touching one byte of the binary maps its whole 2 MB block.
	FilePMD int64
}

// ReadProportional reads the PSS and USS of pid from /proc/<pid>/smaps_rollup (one file the
// kernel sums up; cheap enough to read while the process runs).
func ReadProportional(pid int) (Proportional, error) {
	var p Proportional
	var clean, dirty int64
	err := readKB("/proc/"+strconv.Itoa(pid)+"/smaps_rollup", map[string]*int64{
		"Pss": &p.PSS, "Pss_Anon": &p.PSSAnon, "Pss_File": &p.PSSFile, "Private_Clean": &clean, "Private_Dirty": &dirty,
		"FilePmdMapped": &p.FilePMD,
	})
	p.USS = clean + dirty
	return p, err
}

func readKB(path string, fields map[string]*int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := parseKB(f, fields); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// parseKB reads "Name:   1234 kB" lines (the format of /proc/<pid>/status and smaps_rollup)
// into the fields named; every one of them must be present.
func parseKB(r io.Reader, fields map[string]*int64) error {
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		dst, want := fields[k]
		if !ok || !want {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) != 2 || fs[1] != "kB" {
			return fmt.Errorf("unexpected %s line %q", k, v)
		}
		n, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		*dst = n * 1024
		seen[k] = true
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for k := range fields {
		if !seen[k] {
			return fmt.Errorf("no %s line", k)
		}
	}
	return nil
}

// GoRuntime is the Go runtime's view of a process's memory, from the Prometheus Go collector
// on its /metrics: what of RssAnon is Go's (heap, stacks, runtime structures) and what is not
// (e.g. memory the SQLite engine allocates outside the Go heap).
type GoRuntime struct {
	// HeapInuse is heap spans in use; HeapIdle spans without objects, of which HeapReleased
	// went back to the OS; Stack goroutine stacks; Sys everything the runtime mapped.
	HeapInuse, HeapIdle, HeapReleased, Stack, Sys int64
	Goroutines                                    int
}

// Held is what the runtime holds from the OS: mapped and not released.
func (g GoRuntime) Held() int64 { return g.Sys - g.HeapReleased }

// ReadGoRuntime scrapes baseURL/metrics.
func ReadGoRuntime(ctx context.Context, client *http.Client, baseURL string) (GoRuntime, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/metrics", nil)
	if err != nil {
		return GoRuntime{}, err
	}
	res, err := client.Do(req)
	if err != nil {
		return GoRuntime{}, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return GoRuntime{}, fmt.Errorf("%s/metrics: %s", baseURL, res.Status)
	}
	return parseGoRuntime(res.Body)
}

func parseGoRuntime(r io.Reader) (GoRuntime, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return GoRuntime{}, err
	}
	var g GoRuntime
	var goroutines int64
	for name, dst := range map[string]*int64{
		"go_memstats_heap_inuse_bytes": &g.HeapInuse, "go_memstats_heap_idle_bytes": &g.HeapIdle,
		"go_memstats_heap_released_bytes": &g.HeapReleased, "go_memstats_stack_inuse_bytes": &g.Stack,
		"go_memstats_sys_bytes": &g.Sys, "go_goroutines": &goroutines,
	} {
		f := families[name]
		if f == nil || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetGauge() == nil {
			return GoRuntime{}, fmt.Errorf("metrics: no gauge %s", name)
		}
		*dst = int64(f.GetMetric()[0].GetGauge().GetValue())
	}
	g.Goroutines = int(goroutines)
	return g, nil
}
