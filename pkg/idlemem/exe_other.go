//go:build !linux && unix

package idlemem

import (
	"syscall"
	"time"
)

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// releaseExecutable does nothing where the kernel's advice is not known.
func releaseExecutable(bool) {}
