package testinfra

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ThreadNices reads the nice value of every thread of process pid (field 19 of each thread's
// /proc stat); pid 0 is this process.
func ThreadNices(pid int) ([]int, error) {
	dir := "/proc/self/task"
	if pid != 0 {
		dir = fmt.Sprintf("/proc/%d/task", pid)
	}
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	nices := make([]int, 0, len(tasks))
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, task.Name(), "stat"))
		if err != nil {
			continue // the thread ended
		}
		// The command name in parentheses may hold spaces: the fields follow the last ')'.
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(fields) < 17 {
			return nil, fmt.Errorf("%s/%s/stat %q: too few fields", dir, task.Name(), b)
		}
		n, err := strconv.Atoi(fields[16])
		if err != nil {
			return nil, fmt.Errorf("%s/%s/stat %q: %w", dir, task.Name(), b, err)
		}
		nices = append(nices, n)
	}
	if len(nices) == 0 {
		return nil, fmt.Errorf("no threads under %s", dir)
	}
	return nices, nil
}
