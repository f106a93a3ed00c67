package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/picoclaw-suite/picoclaw/pkg/runner"
)

// logOptions bound suite.log: rotated by size and by age, a few old files kept.
type logOptions struct {
	maxMB  int
	maxAge time.Duration
	keep   int
}

func (o logOptions) validate() error {
	switch {
	case o.maxMB < 1:
		return usagef("--log-max-size must be at least 1 (MB), got %d", o.maxMB)
	case o.maxAge < time.Minute:
		return usagef("--log-max-age must be at least 1m, got %s", o.maxAge)
	case o.keep < 0:
		return usagef("--log-keep must not be negative, got %d", o.keep)
	}
	return nil
}

// suiteLog is the embedded suite's log file, rotated by size as it is written and by age on
// a timer; rotated files are kept up to the configured number.
type suiteLog struct {
	*lumberjack.Logger
}

func openSuiteLog(path string, o logOptions) *suiteLog {
	return &suiteLog{&lumberjack.Logger{Filename: path, MaxSize: o.maxMB, MaxBackups: o.keep, LocalTime: false}}
}

// rotateEvery rotates the log when it has been written to for maxAge; the channel closes when
// ctx ends.
func (l *suiteLog) rotateEvery(ctx context.Context, maxAge time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runner.Every(ctx, maxAge, func() { _ = l.Rotate() })
	}()
	return done
}

// lockDataDir takes the data directory's lock file for this process, or says which process
// holds it.
func lockDataDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, ".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		_ = f.Close()
		return nil, fmt.Errorf("data directory %s is in use by another picoclaw (pid %s); stop it first or use --data", dir, string(holder))
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "%d", os.Getpid())
	return f, nil
}
