package testpeer

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Alive reports whether pid is a running process. A zombie counts as dead: it no longer runs,
// it only waits for its new parent (often the container's init) to reap it.
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name, which may itself contain ") ".
	s := string(stat)
	i := strings.LastIndex(s, ") ")
	if i < 0 || i+2 >= len(s) {
		return true
	}
	st := s[i+2]
	return st != 'Z' && st != 'X'
}

// InDir lists the running processes whose working directory is dir or below it: every
// process a command in the workspace started, whatever PID namespace it lives in (a PID
// written by a sandboxed process is a number of its own namespace and means nothing here).
func InDir(dir string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err != nil {
			continue
		}
		if (cwd == dir || strings.HasPrefix(cwd, dir+"/")) && Alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}
