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
