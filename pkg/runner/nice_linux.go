package runner

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// settlePasses is how many passes over the threads in a row must find nothing to change before
// lowerPriority is done, and maxPasses how many it makes at most.
const (
	settlePasses = 2
	maxPasses    = 50
)

// lowerPriority sets every thread of the process to nice n, leaving a thread that already runs
// at n or lower priority alone (an operator's `nice -n 15` stays). Linux keeps the nice value per
// thread and a new thread starts with its creator's, so once every thread has it, every thread
// the Go runtime starts later has it too. A thread being started while the list is read shows
// up in it only later, with its creator's old value: every thread is looked at again until two
// passes in a row, a moment apart, find nothing to change.
func lowerPriority(n int) error {
	var prev []int
	quiet := 0
	for range maxPasses {
		tids, err := threads()
		if err != nil {
			return fmt.Errorf("lower the CPU priority: %w", err)
		}
		changed := !slices.Equal(tids, prev)
		for _, tid := range tids {
			did, err := renice(tid, n)
			if err != nil {
				return fmt.Errorf("lower the CPU priority of thread %d to nice %d: %w", tid, n, err)
			}
			changed = changed || did
		}
		if changed {
			quiet = 0
		} else {
			quiet++
		}
		if quiet >= settlePasses {
			return nil
		}
		prev = tids
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("lower the CPU priority: new threads kept starting for %d passes", maxPasses)
}

// threads lists the process's thread ids in ascending order.
func threads() ([]int, error) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(tasks))
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	slices.Sort(tids)
	return tids, nil
}

// renice sets thread tid to nice n unless it already runs at nice n or above, and reports
// whether it changed it. A thread that ended meanwhile is no error.
func renice(tid, n int) (bool, error) {
	// The system call answers 20 - nice (1 … 40), which the syscall package passes on as is.
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if errors.Is(err, syscall.ESRCH) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if 20-prio >= n {
		return false, nil
	}
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, n); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}
