package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
		return usage(txtLogMaxSize, o.maxMB)
	case o.maxAge < time.Minute:
		return usage(txtLogMaxAge, o.maxAge)
	case o.keep < 0:
		return usage(txtLogKeep, o.keep)
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
		return nil, texts.Wrap(nil, err, txtDataDir, dir, trouble(err))
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		_ = f.Close()
		return nil, texts.Wrap(nil, err, txtDataDirLocked, dir, strings.TrimSpace(string(holder)))
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "%d", os.Getpid())
	return f, nil
}
