// Package sandbox runs one command (bash or git) in a confinement built from kernel facilities:
// a new user, PID, mount, network, IPC and UTS namespace and a Landlock domain.
//
// The executor starts its own binary again (/proc/self/exe) with a sentinel argv[0]; that
// process becomes PID 1 of the new PID namespace (see init_linux.go), prepares the mounts,
// limits and Landlock rules, runs the command as its child, reports how the command ended and
// exits, which makes the kernel kill every process left in the namespace. Binaries that can
// run the executor call MaybeRunInit first thing in main.
package sandbox

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
)

// Modes of executor.sandbox.mode.
const (
	// ModeNamespaces is the sandbox: namespaces plus Landlock. It is the default.
	ModeNamespaces = "namespaces"
	// ModeNone runs commands directly as the executor's user: an explicit opt-out.
	ModeNone = "none"
)

// Network settings of executor.sandbox.network.
const (
	// NetworkNone gives each command an empty network namespace (only its own loopback).
	NetworkNone = "none"
	// NetworkAllow shares the host network; TCP connect is limited to the allowed ports where
	// Landlock can enforce it.
	NetworkAllow = "allow"
)

// ErrUnavailable marks a sandbox that cannot be set up on this machine.
var ErrUnavailable = errors.New("sandbox unavailable")

// Limits are the resource limits of every sandboxed command (rlimits, per process; the process
// count is per sandbox because every sandbox has its own user namespace).
type Limits struct {
	CPUSeconds  uint64 `yaml:"cpu_seconds" json:"cpu_seconds"`
	MemoryBytes uint64 `yaml:"memory_bytes" json:"memory_bytes"`
	Processes   uint64 `yaml:"processes" json:"processes"`
	OpenFiles   uint64 `yaml:"open_files" json:"open_files"`
	FileBytes   uint64 `yaml:"file_size_bytes" json:"file_size_bytes"`
	// TmpBytes sizes the private /tmp (tmpfs) each command gets; HOME lives there too.
	TmpBytes uint64 `yaml:"tmp_bytes" json:"tmp_bytes"`
}

// Config is the executor.sandbox section.
type Config struct {
	Mode    string `yaml:"mode"`
	Network string `yaml:"network"`
	// AllowedTCPPorts are the only TCP ports commands may connect to when network is allow.
	AllowedTCPPorts []uint16 `yaml:"allowed_tcp_ports"`
	Limits          Limits   `yaml:"limits"`
	// InitBinary is the program started as the sandbox init; empty (always, in the service) is
	// this very binary. Benchmarks set it to measure another build of the suite.
	InitBinary string `yaml:"-"`
}

// DefaultConfig is the sandbox every executor gets unless configured otherwise.
func DefaultConfig() Config {
	return Config{
		Mode:            ModeNamespaces,
		Network:         NetworkNone,
		AllowedTCPPorts: []uint16{22, 80, 443, 9418},
		Limits: Limits{
			CPUSeconds:  600,
			MemoryBytes: 4 << 30,
			Processes:   512,
			OpenFiles:   1024,
			FileBytes:   1 << 30,
			TmpBytes:    512 << 20,
		},
	}
}

// withDefaults fills unset fields (a zero Config is the default sandbox).
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Mode == "" {
		c.Mode = d.Mode
	}
	if c.Network == "" {
		c.Network = d.Network
	}
	if c.AllowedTCPPorts == nil {
		c.AllowedTCPPorts = d.AllowedTCPPorts
	}
	for _, f := range []struct{ v, d *uint64 }{
		{&c.Limits.CPUSeconds, &d.Limits.CPUSeconds}, {&c.Limits.MemoryBytes, &d.Limits.MemoryBytes},
		{&c.Limits.Processes, &d.Limits.Processes}, {&c.Limits.OpenFiles, &d.Limits.OpenFiles},
		{&c.Limits.FileBytes, &d.Limits.FileBytes}, {&c.Limits.TmpBytes, &d.Limits.TmpBytes},
	} {
		if *f.v == 0 {
			*f.v = *f.d
		}
	}
	return c
}

// Problem is one invalid key of the section, relative to executor.sandbox.
type Problem struct {
	Key, Msg string
}

// Check validates the section.
func (c Config) Check() []Problem {
	var ps []Problem
	if !slices.Contains([]string{ModeNamespaces, ModeNone}, c.Mode) {
		ps = append(ps, Problem{"mode", fmt.Sprintf("must be %s or %s, got %q", ModeNamespaces, ModeNone, c.Mode)})
	}
	if !slices.Contains([]string{NetworkNone, NetworkAllow}, c.Network) {
		ps = append(ps, Problem{"network", fmt.Sprintf("must be %s or %s, got %q", NetworkNone, NetworkAllow, c.Network)})
	}
	l := c.Limits
	for key, v := range map[string]uint64{"limits.cpu_seconds": l.CPUSeconds, "limits.memory_bytes": l.MemoryBytes,
		"limits.processes": l.Processes, "limits.open_files": l.OpenFiles, "limits.file_size_bytes": l.FileBytes,
		"limits.tmp_bytes": l.TmpBytes} {
		if v == 0 {
			ps = append(ps, Problem{key, "must be positive"})
		}
	}
	if l.Processes > 0 && l.Processes < minProcesses {
		ps = append(ps, Problem{"limits.processes", fmt.Sprintf("must be at least %d (the sandbox's own init counts too)", minProcesses)})
	}
	if l.MemoryBytes > 0 && l.MemoryBytes < minMemory {
		ps = append(ps, Problem{"limits.memory_bytes", fmt.Sprintf("must be at least %d", minMemory)})
	}
	if l.OpenFiles > 0 && l.OpenFiles < 64 {
		ps = append(ps, Problem{"limits.open_files", "must be at least 64"})
	}
	return ps
}

// minProcesses leaves room for the sandbox init's threads and a small pipeline.
const minProcesses = 32

// minMemory keeps the sandbox init itself (a Go program) from failing its own allocations.
const minMemory = 256 << 20

// Label names how commands run, for results, logs and status.
func (c Config) Label() string {
	if c.withDefaults().Mode == ModeNone {
		return "none"
	}
	return "namespaces+landlock"
}

// Request is one command to run.
type Request struct {
	Argv []string
	// Dir is the working directory; it must be inside Workspace.
	Dir string
	// Env is the command's whole environment (HOME and TMPDIR are set by the sandbox).
	Env []string
	// Workspace is the only directory the command may change.
	Workspace string
	// GitDirWritable leaves <workspace>/.git writable (git operations); shell commands see it
	// read-only, so they cannot plant hooks or configuration for later git runs.
	GitDirWritable bool
}

// Status is how the command inside the sandbox ended.
type Status struct {
	// Started is false when the sandbox could not be set up or the command not started.
	Started  bool   `json:"started"`
	ExitCode int    `json:"exit_code"`
	Signal   int    `json:"signal,omitempty"`
	Error    string `json:"error,omitempty"`
}

// SignalName is the signal that ended the command, or "".
func (s Status) SignalName() string {
	if s.Signal == 0 {
		return ""
	}
	return signalName(syscall.Signal(s.Signal))
}

func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGXCPU:
		return "SIGXCPU"
	case syscall.SIGXFSZ:
		return "SIGXFSZ"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return strings.ToUpper(sig.String())
}

// networkNeedsABI refuses the host network where Landlock cannot limit TCP to the allowed ports
// (ABI 4): commands would reach every local service. Fail closed rather than run unlimited.
func networkNeedsABI(network string, abi int) error {
	if network == NetworkAllow && abi < 4 {
		return fmt.Errorf("executor.sandbox.network: allow needs Landlock ABI 4 or later to limit TCP ports; this kernel has ABI %d", abi)
	}
	return nil
}
