package runner

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// lowerPriority sets every thread of the process to nice n, leaving a thread that already runs
// at n or lower priority alone (an operator's `nice -n 15` stays). Linux keeps the nice value per
// thread and a new thread starts with its creator's, so once every thread present has it, every
// thread the Go runtime starts later has it too; the list is read again until no new thread
// turns up.
func lowerPriority(n int) error {
	done := map[int]bool{}
	for range 10 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("lower the CPU priority: %w", err)
		}
		fresh := false
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || done[tid] {
				continue
			}
			fresh, done[tid] = true, true
			if err := renice(tid, n); err != nil {
				return fmt.Errorf("lower the CPU priority of thread %d to nice %d: %w", tid, n, err)
			}
		}
		if !fresh {
			return nil
		}
	}
	return nil
}

// renice sets thread tid to nice n unless it already runs at nice n or above. A thread that
// ended meanwhile is no error.
func renice(tid, n int) error {
	// The system call answers 20 - nice (1 … 40), which the syscall package passes on as is.
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	if err != nil {
		return err
	}
	if 20-prio >= n {
		return nil
	}
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, n); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
