package suite

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
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
