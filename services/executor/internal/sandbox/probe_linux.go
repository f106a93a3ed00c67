package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Facility is one kernel facility the sandbox uses and what this machine says about it.
type Facility struct {
	Name   string
	OK     bool
	Detail string
}

// Report is what Probe found.
type Report struct {
	Label      string
	Network    string
	Facilities []Facility
	// Err is nil when a command actually ran in the sandbox.
	Err error
}

// Summary is a one-line description for logs and status.
func (r Report) Summary() string {
	var parts []string
	for _, f := range r.Facilities {
		state := "ok"
		if !f.OK {
			state = "missing"
		}
		parts = append(parts, f.Name+"="+state)
	}
	return strings.Join(parts, " ")
}

// Probe checks the facilities the sandbox needs and runs `true` in it, in workspace (a
// temporary directory when empty). With mode none it only describes the machine.
func Probe(ctx context.Context, cfg Config, workspace string) Report {
	r := Report{Label: cfg.Label(), Network: cfg.Network}
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil {
		abi = 0
	}
	ll := Facility{Name: "landlock", OK: abi >= 1, Detail: fmt.Sprintf("ABI %d", abi)}
	if abi < 1 {
		ll.Detail = "not available (kernel 5.13+ with CONFIG_SECURITY_LANDLOCK=y and landlock in the lsm= boot list)"
	} else {
		var notes []string
		if abi < 3 {
			notes = append(notes, "no truncate control")
		}
		if abi < 4 {
			notes = append(notes, "no TCP port rules (network allow is not port-limited)")
		}
		if abi < 6 {
			notes = append(notes, "no signal/abstract-socket scoping")
		}
		if len(notes) > 0 {
			ll.Detail += " (" + strings.Join(notes, ", ") + ")"
		}
	}
	userns := Facility{Name: "user_namespaces", OK: true, Detail: "enabled"}
	if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil && strings.TrimSpace(string(b)) == "0" {
		userns = Facility{Name: "user_namespaces", Detail: "user.max_user_namespaces is 0"}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && strings.TrimSpace(string(b)) == "0" && os.Geteuid() != 0 {
		userns = Facility{Name: "user_namespaces", Detail: "kernel.unprivileged_userns_clone is 0"}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); err == nil && strings.TrimSpace(string(b)) == "1" && os.Geteuid() != 0 {
		userns.Detail += "; AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1)"
	}
	cg := Facility{Name: "pids_cgroup", OK: true, Detail: "not needed (process limit is enforced by rlimit for non-root users)"}
	if os.Geteuid() == 0 {
		if CgroupAvailable() {
			cg.Detail = "writable pids cgroup: the process limit also holds for root"
		} else {
			cg = Facility{Name: "pids_cgroup", Detail: "running as root without a writable pids cgroup: the process limit is not enforced (root is exempt from RLIMIT_NPROC); every process still ends with its command"}
		}
	}
	r.Facilities = []Facility{userns, ll, cg}
	if cfg.Mode == ModeNone {
		r.Err = fmt.Errorf("%w: executor.sandbox.mode is none: commands run unconfined as the executor's user", ErrUnavailable)
		return r
	}
	if workspace == "" {
		dir, err := os.MkdirTemp("", "picoclaw-sandbox-probe-")
		if err != nil {
			r.Err = err
			return r
		}
		defer os.RemoveAll(dir)
		workspace = dir
	}
	run := Facility{Name: "run", OK: true, Detail: "a command ran in the sandbox"}
	if err := runProbe(ctx, cfg, workspace); err != nil {
		run = Facility{Name: "run", Detail: err.Error()}
		r.Err = fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	r.Facilities = append(r.Facilities, run)
	return r
}

func runProbe(ctx context.Context, cfg Config, workspace string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p, err := cfg.Command(Request{Argv: []string{"true"}, Workspace: workspace,
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}})
	if err != nil {
		return err
	}
	var out bytes.Buffer
	p.Cmd.Stdout, p.Cmd.Stderr = &out, &out
	if err := p.Cmd.Start(); err != nil {
		p.Close()
		return fmt.Errorf("start the sandbox (user namespaces): %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = p.Cmd.Process.Kill() })
	defer stop()
	if err := p.Started(); err != nil {
		_ = p.Cmd.Process.Kill()
	}
	st := p.Wait()
	switch {
	case st.Error != "":
		return fmt.Errorf("%s", st.Error)
	case st.Signal != 0:
		return fmt.Errorf("sandbox killed by %s", st.SignalName())
	case st.ExitCode != 0:
		return fmt.Errorf("true exited with %d: %s", st.ExitCode, strings.TrimSpace(out.String()))
	}
	return nil
}
