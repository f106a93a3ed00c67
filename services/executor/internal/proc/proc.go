// Package proc runs shell commands and git in the workspace: inside the sandbox (or, with the
// sandbox switched off, in their own process group), with a scrubbed environment, a timeout that
// kills every process of the command, and output captured up to a cap while the rest is
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
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/sandbox"
)

// Spec describes one process to run.
type Spec struct {
	Argv    []string
	Dir     string
	Env     []string
	Timeout time.Duration
	// Limit caps the captured output (stdout and stderr interleaved) in bytes.
	Limit int
	// Sandbox runs the command in the sandbox unless its mode is none; nil runs it directly.
	Sandbox *sandbox.Config
	// Workspace is the directory the sandboxed command may change.
	Workspace string
	// GitDirWritable leaves the workspace's .git writable inside the sandbox (git operations).
	GitDirWritable bool
}

// Exit reasons of Output.ExitReason.
const (
	ExitNormal    = "exit"
	ExitTimeout   = "timeout"
	ExitSignal    = "signal"
	ExitLimit     = "limit"
	ExitCancelled = "cancelled"
	ExitNoSandbox = "sandbox_unavailable"
	ExitStart     = "not_started"
)

// Output is what a process produced.
type Output struct {
	Text      string
	Total     int64
	Truncated bool
	ExitCode  int
	TimedOut  bool
	// Sandbox says how the command ran: "namespaces+landlock" or "none".
	Sandbox string
	// ExitReason is one of the Exit* constants; Signal names the signal that ended it.
	ExitReason string
	Signal     string
}

// ErrTimeout marks a process killed at its deadline.
var ErrTimeout = errors.New("timed out")

// drainGrace bounds how long output is still read after the process group is gone, in case a
// process that left the group keeps the pipe open.
const drainGrace = 200 * time.Millisecond

// ErrSandbox marks a command that was not run because the sandbox could not be set up.
var ErrSandbox = errors.New("sandbox unavailable")

// sandboxErr names the missing facility and the explicit way out.
func sandboxErr(detail any) error {
	return domain.FailWith(ErrSandbox, fmt.Errorf("%v", detail), domain.CodeNoSandbox)
}

// Run starts spec.Argv, waits for it (or its timeout), then makes sure nothing of it is left:
// in the sandbox the end of its PID namespace kills every descendant; without the sandbox its
// process group is killed.
func Run(ctx context.Context, spec Spec) (Output, error) {
	if len(spec.Argv) == 0 {
		return Output{}, fmt.Errorf("%w: empty command", domain.ErrInvalid)
	}
	if spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.Timeout)
		defer cancel()
	}
	label := "none"
	var sp *sandbox.Process
	waited := false
	var cmd *exec.Cmd
	if spec.Sandbox != nil && spec.Sandbox.Mode != sandbox.ModeNone {
		label = spec.Sandbox.Label()
		var err error
		sp, err = spec.Sandbox.Command(sandbox.Request{Argv: spec.Argv, Dir: spec.Dir, Env: spec.Env,
			Workspace: spec.Workspace, GitDirWritable: spec.GitDirWritable})
		if err != nil {
			return Output{Sandbox: label, ExitCode: -1, ExitReason: ExitNoSandbox},
				sandboxErr(err)
		}
		// Wait releases the sandbox; only a command that never got that far is released here.
		defer func() {
			if !waited {
				sp.Close()
			}
		}()
		cmd = sp.Cmd
	} else {
		cmd = exec.CommandContext(ctx, spec.Argv[0], spec.Argv[1:]...)
		cmd.Dir = spec.Dir
		cmd.Env = spec.Env
		if cmd.Env == nil {
			cmd.Env = []string{}
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return Output{Sandbox: label}, fmt.Errorf("pipe: %w", err)
	}
	defer pr.Close()
	// An *os.File is handed to the child directly: Wait returns when the process exits, not
	// when every descendant has closed the pipe.
	cmd.Stdout = pw
	cmd.Stderr = pw
	if sp != nil {
		if err = ctx.Err(); err == nil {
			err = cmd.Start()
		}
		if err == nil {
			// Killing the sandbox init ends its PID namespace and with it every process.
			stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
			defer stop()
		}
	} else {
		err = cmd.Start()
	}
	if err != nil {
		_ = pw.Close()
		reason := ExitStart
		if sp != nil {
			reason = ExitNoSandbox
			err = sandboxErr(fmt.Sprintf("start (user namespaces): %v", err))
		}
		if sp != nil {
			return Output{Sandbox: label, ExitCode: -1, ExitReason: reason}, err
		}
		return Output{Sandbox: label, ExitCode: -1, ExitReason: reason}, domain.FailWith(nil, err, domain.CodeNotStarted, spec.Argv[0])
	}
	_ = pw.Close()
	var startErr error
	if sp != nil {
		if startErr = sp.Started(); startErr != nil {
			_ = cmd.Process.Kill()
		}
	}
	capw := newCapWriter(spec.Limit)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(capw, pr)
	}()
	var waitErr error
	var st sandbox.Status
	if sp != nil {
		st = sp.Wait()
		waited = true
	} else {
		waitErr = cmd.Wait()
		_ = killGroup(cmd.Process.Pid)
	}
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainGrace):
		// Closing the read end makes io.Copy return; the goroutine ends with it.
		_ = pr.Close()
		<-drained
	}
	out := Output{Text: capw.String(), Total: capw.total, Truncated: capw.total > int64(len(capw.buf)), Sandbox: label}
	if out.Truncated {
		out.Text += fmt.Sprintf("\n[... output cut: %d of %d bytes kept]", len(capw.buf), capw.total)
	}
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && spec.Timeout > 0 {
		out.TimedOut = true
		out.ExitCode = -1
		out.ExitReason = ExitTimeout
		return out, domain.Fail(ErrTimeout, domain.CodeTimedOut, spec.Timeout)
	}
	if ctx.Err() != nil {
		out.ExitCode = -1
		out.ExitReason = ExitCancelled
		return out, domain.FailWith(nil, ctx.Err(), domain.CodeCancelled)
	}
	if startErr != nil {
		out.ExitCode = -1
		out.ExitReason = ExitNoSandbox
		return out, sandboxErr(startErr)
	}
	if sp != nil {
		return sandboxOutcome(out, st, spec.Argv[0])
	}
	var exitErr *exec.ExitError
	if errors.As(waitErr, &exitErr) {
		out.ExitCode = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return signalled(out, int(ws.Signal()))
		}
		out.ExitReason = ExitNormal
		return out, domain.Fail(nil, domain.CodeExitStatus, out.ExitCode)
	}
	if waitErr != nil {
		return out, domain.FailWith(nil, waitErr, domain.CodeNotStarted, spec.Argv[0])
	}
	out.ExitReason = ExitNormal
	return out, nil
}

// sandboxOutcome turns the sandbox init's report into the output and error.
func sandboxOutcome(out Output, st sandbox.Status, argv0 string) (Output, error) {
	out.ExitCode = st.ExitCode
	switch {
	case st.Signal != 0:
		return signalled(out, st.Signal)
	case !st.Started && st.Error != "" && st.ExitCode == -1:
		out.ExitReason = ExitNoSandbox
		return out, sandboxErr(st.Error)
	case st.Error != "":
		out.ExitReason = ExitStart
		return out, domain.FailWith(nil, errors.New(st.Error), domain.CodeNotStarted, argv0)
	case st.ExitCode != 0:
		out.ExitReason = ExitNormal
		return out, domain.Fail(nil, domain.CodeExitStatus, st.ExitCode)
	}
	out.ExitReason = ExitNormal
	return out, nil
}

func signalled(out Output, sig int) (Output, error) {
	out.ExitCode = -1
	out.Signal = sandbox.Status{Signal: sig}.SignalName()
	switch syscall.Signal(sig) {
	case syscall.SIGXCPU:
		out.ExitReason = ExitLimit
		return out, domain.Fail(nil, domain.CodeKilledCPU, out.Signal)
	case syscall.SIGXFSZ:
		out.ExitReason = ExitLimit
		return out, domain.Fail(nil, domain.CodeKilledFileSize, out.Signal)
	}
	out.ExitReason = ExitSignal
	return out, domain.Fail(nil, domain.CodeKilledBySignal, out.Signal)
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
