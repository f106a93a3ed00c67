// Package proc runs shell commands and git in the workspace: scrubbed environment, a timeout
// that kills the whole process group, and output captured up to a cap while the rest is
// streamed away unbuffered.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

// Spec describes one process to run.
type Spec struct {
	Argv    []string
	Dir     string
	Env     []string
	Timeout time.Duration
	// Limit caps the captured output (stdout and stderr interleaved) in bytes.
	Limit int
}

// Output is what a process produced.
type Output struct {
	Text      string
	Total     int64
	Truncated bool
	ExitCode  int
	TimedOut  bool
}

// ErrTimeout marks a process killed at its deadline.
var ErrTimeout = errors.New("timed out")

// drainGrace bounds how long output is still read after the process group is gone, in case a
// process that left the group keeps the pipe open.
const drainGrace = 200 * time.Millisecond

// Run starts spec.Argv, waits for it (or its timeout), then kills whatever is left of its
// process group, so background children never outlive the command.
func Run(ctx context.Context, spec Spec) (Output, error) {
	if len(spec.Argv) == 0 {
		return Output{}, fmt.Errorf("%w: empty command", domain.ErrInvalid)
	}
	if spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.Timeout)
		defer cancel()
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return Output{}, fmt.Errorf("pipe: %w", err)
	}
	defer pr.Close()
	cmd := exec.CommandContext(ctx, spec.Argv[0], spec.Argv[1:]...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	// An *os.File is handed to the child directly: Wait returns when the process exits, not
	// when every descendant has closed the pipe.
	cmd.Stdout = pw
	cmd.Stderr = pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	if err := cmd.Start(); err != nil {
		_ = pw.Close()
		return Output{}, fmt.Errorf("start %s: %w", spec.Argv[0], err)
	}
	_ = pw.Close()
	capw := newCapWriter(spec.Limit)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(capw, pr)
	}()
	waitErr := cmd.Wait()
	_ = killGroup(cmd.Process.Pid)
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainGrace):
		// Closing the read end makes io.Copy return; the goroutine ends with it.
		_ = pr.Close()
		<-drained
	}
	out := Output{Text: capw.String(), Total: capw.total, Truncated: capw.total > int64(len(capw.buf))}
	if out.Truncated {
		out.Text += fmt.Sprintf("\n[... output cut: %d of %d bytes kept]", len(capw.buf), capw.total)
	}
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && spec.Timeout > 0 {
		out.TimedOut = true
		out.ExitCode = -1
		return out, fmt.Errorf("%w after %s (process group killed)", ErrTimeout, spec.Timeout)
	}
	if ctx.Err() != nil {
		return out, fmt.Errorf("cancelled: %w", ctx.Err())
	}
	var exitErr *exec.ExitError
	if errors.As(waitErr, &exitErr) {
		out.ExitCode = exitErr.ExitCode()
		return out, fmt.Errorf("exit status %d", out.ExitCode)
	}
	if waitErr != nil {
		return out, waitErr
	}
	return out, nil
}

func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// capWriter keeps the first limit bytes and counts the rest without storing it.
type capWriter struct {
	buf   []byte
	limit int
	total int64
}

func newCapWriter(limit int) *capWriter {
	if limit < 0 {
		limit = 0
	}
	return &capWriter{limit: limit, buf: make([]byte, 0, min(limit, 4096))}
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.total += int64(len(p))
	if room := w.limit - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (w *capWriter) String() string { return strings.ToValidUTF8(string(w.buf), "\uFFFD") }

// Env builds a scrubbed environment: only the allowlisted names, with values from lookup.
func Env(allow []string, lookup func(string) (string, bool)) []string {
	env := []string{}
	seen := map[string]bool{}
	for _, name := range allow {
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		if v, ok := lookup(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}
