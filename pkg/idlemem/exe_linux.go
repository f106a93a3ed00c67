//go:build linux

package idlemem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// releaseExecutable applies the advice to the read-only mappings of the executable. Errors are
// ignored: the advice is a hint, and a kernel without it leaves the pages where they are.
func releaseExecutable() {
	ranges, err := exeRanges()
	if err != nil {
		return
	}
	exe, err := os.Open("/proc/self/exe")
	pageOut := false
	if err == nil {
		defer exe.Close()
		// On tmpfs the file is the memory: paging it out would only move it to swap.
		var fs unix.Statfs_t
		pageOut = unix.Fstatfs(int(exe.Fd()), &fs) == nil && fs.Type != unix.TMPFS_MAGIC && fs.Type != unix.RAMFS_MAGIC
		// A binary the build has just written may still be dirty in the page cache, and
		// dirty pages are neither paged out nor dropped: write it back first.
		if pageOut {
			_ = unix.Fdatasync(int(exe.Fd()))
		}
	}
	for _, r := range ranges {
		_ = madvise(r, unix.MADV_RANDOM)
		if pageOut {
			_ = madvise(r, unix.MADV_PAGEOUT)
		} else {
			_ = madvise(r, unix.MADV_DONTNEED)
		}
	}
	if pageOut {
		// The executable's pages no process maps leave the page cache too. Written by the build
		// or read ahead at exec, they sit there in large folios, and a fault maps a whole folio;
		// read back one page at a time (MADV_RANDOM), they are mapped page by page.
		_ = unix.Fadvise(int(exe.Fd()), 0, 0, unix.FADV_DONTNEED)
	}
}

// unmapExecutable drops the executable's pages from the process only (MADV_DONTNEED): the page
// cache keeps them.
func unmapExecutable() {
	ranges, err := exeRanges()
	if err != nil {
		return
	}
	for _, r := range ranges {
		_ = madvise(r, unix.MADV_DONTNEED)
	}
}

var (
	rangesOnce sync.Once
	ranges     []addrRange
	rangesErr  error
)

// exeRanges are executableRanges of this process, read once: the executable's mappings do not
// move.
func exeRanges() ([]addrRange, error) {
	rangesOnce.Do(func() { ranges, rangesErr = executableRanges("/proc/self/maps") })
	return ranges, rangesErr
}

type addrRange struct{ start, end uintptr }

// executableRanges are the read-only (code and constants) mappings of this process's own
// executable in the maps file.
func executableRanges(mapsPath string) ([]addrRange, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return nil, err
	}
	f, err := os.Open(mapsPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMaps(bufio.NewScanner(f), exe)
}

// parseMaps picks the lines of /proc/<pid>/maps that map path without write permission.
func parseMaps(sc *bufio.Scanner, path string) ([]addrRange, error) {
	var out []addrRange
	for sc.Scan() {
		// address perms offset dev inode pathname (the pathname may hold spaces)
		fields := strings.SplitN(sc.Text(), " ", 6)
		if len(fields) < 6 || strings.TrimLeft(fields[5], " ") != path || strings.Contains(fields[1], "w") {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || b <= a {
			continue
		}
		out = append(out, addrRange{uintptr(a), uintptr(b)})
	}
	return out, sc.Err()
}

func madvise(r addrRange, advice int) error {
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, r.start, r.end-r.start, uintptr(advice)); errno != 0 {
		return errno
	}
	return nil
}
