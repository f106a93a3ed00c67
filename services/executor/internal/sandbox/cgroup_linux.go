package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// pidsCgroup is a per-command pids cgroup. The process-count rlimit is not enforced for root
// (the kernel exempts the root user), so when the executor runs as root the command's
// processes are also counted by a cgroup where one can be created. Best effort: without a
// writable pids hierarchy, root relies on the job's end killing the namespace.
type pidsCgroup struct {
	dir string
}

func newPidsCgroup(max uint64) *pidsCgroup {
	if os.Geteuid() != 0 || max == 0 {
		return nil
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "picoclaw-sandbox-" + hex.EncodeToString(b[:])
	for _, base := range pidsHierarchies() {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.FormatUint(max, 10)), 0o644); err != nil {
			_ = os.Remove(dir)
			continue
		}
		return &pidsCgroup{dir: dir}
	}
	return nil
}

// pidsHierarchies lists where a pids cgroup can be made: a cgroup v1 pids hierarchy, or a
// cgroup v2 hierarchy with the pids controller enabled for children.
func pidsHierarchies() []string {
	var out []string
	if _, err := os.Stat("/sys/fs/cgroup/pids/cgroup.procs"); err == nil {
		out = append(out, "/sys/fs/cgroup/pids")
	}
	for _, v2 := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if b, err := os.ReadFile(filepath.Join(v2, "cgroup.subtree_control")); err == nil &&
			strings.Contains(" "+strings.TrimSpace(string(b))+" ", " pids ") {
			out = append(out, v2)
		}
	}
	return out
}

func (c *pidsCgroup) add(pid int) {
	if c == nil {
		return
	}
	_ = os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

func (c *pidsCgroup) remove() {
	if c == nil {
		return
	}
	_ = os.Remove(c.dir)
}

// CgroupAvailable reports whether a pids cgroup can be created for commands.
func CgroupAvailable() bool {
	c := newPidsCgroup(1 << 20)
	if c == nil {
		return false
	}
	c.remove()
	return true
}
