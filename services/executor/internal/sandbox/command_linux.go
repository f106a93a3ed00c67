package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// initArg0 is the argv[0] that makes a binary act as the sandbox init (see MaybeRunInit).
const initArg0 = "picoclaw-sandbox-init"

// spec is what the executor hands to the sandbox init over a pipe (fd 3).
type spec struct {
	Argv           []string `json:"argv"`
	Dir            string   `json:"dir"`
	Env            []string `json:"env"`
	Workspace      string   `json:"workspace"`
	GitDirWritable bool     `json:"git_dir_writable"`
	Network        string   `json:"network"`
	Ports          []uint16 `json:"ports,omitempty"`
	Limits         Limits   `json:"limits"`
}

// Process is a sandboxed command prepared by Command: start Cmd (after setting its output),
// call Started, wait for Cmd, then read Status.
type Process struct {
	Cmd    *exec.Cmd
	spec   []byte
	specR  *os.File
	specW  *os.File
	statR  *os.File
	statW  *os.File
	cgroup *pidsCgroup

	closeOnce sync.Once
}

// Command prepares req to run in the sandbox. The caller sets Cmd.Stdout/Stderr; killing
// Cmd.Process (the sandbox init) ends every process of the command.
func (c Config) Command(req Request) (*Process, error) {
	if c.Mode == ModeNone {
		return nil, fmt.Errorf("%w: executor.sandbox.mode is none", ErrUnavailable)
	}
	c = c.withDefaults()
	if len(req.Argv) == 0 {
		return nil, errors.New("empty command")
	}
	ws, err := filepath.Abs(req.Workspace)
	if err != nil || req.Workspace == "" {
		return nil, fmt.Errorf("workspace %q: not an absolute path", req.Workspace)
	}
	dir := req.Dir
	if dir == "" {
		dir = ws
	}
	if rel, err := filepath.Rel(ws, dir); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, fmt.Errorf("working directory %s is outside the workspace", dir)
	}
	data, err := json.Marshal(spec{Argv: req.Argv, Dir: dir, Env: req.Env, Workspace: ws,
		GitDirWritable: req.GitDirWritable, Network: c.Network, Ports: c.AllowedTCPPorts, Limits: c.Limits})
	if err != nil {
		return nil, err
	}
	p := &Process{spec: data}
	if p.specR, p.specW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	if p.statR, p.statW, err = os.Pipe(); err != nil {
		p.Close()
		return nil, fmt.Errorf("pipe: %w", err)
	}
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS |
		syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS)
	if c.Network != NetworkAllow {
		flags |= syscall.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	self := "/proc/self/exe"
	if c.InitBinary != "" {
		self = c.InitBinary
	}
	p.Cmd = &exec.Cmd{
		Path: self,
		Args: []string{initArg0},
		// The init's own environment is empty: /proc/1/environ inside the sandbox shows nothing.
		Env:        []string{},
		Dir:        "/",
		ExtraFiles: []*os.File{p.specR, p.statW},
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags: flags,
			// The executor's own ids become 0 inside: the init keeps its capabilities in the
			// namespace across execve (a non-zero uid would lose them) and can set up the
			// mounts; the command then runs as that same user, without any capability (the
			// init drops them all), and files it creates belong to the executor's user.
			UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
			GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
			GidMappingsEnableSetgroups: false,
			Pdeathsig:                  syscall.SIGKILL,
		},
	}
	p.cgroup = newPidsCgroup(c.Limits.Processes)
	return p, nil
}

// Started hands the command to the sandbox init; call it right after Cmd.Start succeeded.
func (p *Process) Started() error {
	_ = p.specR.Close()
	_ = p.statW.Close()
	p.specR, p.statW = nil, nil
	// The init waits for the spec, so it is in the process cgroup before the command exists.
	p.cgroup.add(p.Cmd.Process.Pid)
	_, err := p.specW.Write(p.spec)
	if cerr := p.specW.Close(); err == nil {
		err = cerr
	}
	p.specW = nil
	if err != nil {
		return fmt.Errorf("hand command to sandbox init: %w", err)
	}
	return nil
}

// Wait waits for the command and returns how it ended, then releases everything. It returns
// as soon as the init has reported, which it does after every process of the command is gone;
// the init's own exit (the kernel tearing down the namespaces) is reaped in the background.
func (p *Process) Wait() Status {
	if p.statW != nil {
		_ = p.statW.Close()
		p.statW = nil
	}
	data, _ := io.ReadAll(io.LimitReader(p.statR, 64<<10))
	var st Status
	if len(data) > 0 && json.Unmarshal(data, &st) == nil {
		if !directOutput(p.Cmd) {
			// exec copies into a non-file writer until Wait: wait for that copy.
			_ = p.Cmd.Wait()
			p.Close()
			return st
		}
		go func() {
			_ = p.Cmd.Wait()
			p.Close()
		}()
		return st
	}
	st = p.status(p.Cmd.Wait())
	p.Close()
	return st
}

// directOutput reports whether the command writes straight into files (no copying goroutine).
func directOutput(c *exec.Cmd) bool {
	for _, w := range []io.Writer{c.Stdout, c.Stderr} {
		if _, ok := w.(*os.File); !ok && w != nil {
			return false
		}
	}
	return true
}

// status is how the command ended when the init died without a report.
func (p *Process) status(waitErr error) Status {
	// No report: the init died before it (killed at the deadline, or it crashed).
	st := Status{Started: true, ExitCode: -1}
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			st.Signal = int(ws.Signal())
		} else {
			st.Error = fmt.Sprintf("sandbox init ended with status %d without a report", ee.ExitCode())
		}
	} else if waitErr != nil {
		st.Error = waitErr.Error()
	}
	return st
}

// Close releases the pipes and the process cgroup; Wait calls it. Call it directly only when
// the command was never started.
func (p *Process) Close() {
	p.closeOnce.Do(p.close)
}

func (p *Process) close() {
	for _, f := range []*os.File{p.specR, p.specW, p.statR, p.statW} {
		if f != nil {
			_ = f.Close()
		}
	}
	p.cgroup.remove()
}
