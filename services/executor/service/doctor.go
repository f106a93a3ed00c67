package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/picoclaw-suite/picoclaw/services/executor/internal/sandbox"
)

// doctor prints what the sandbox needs, what this machine has, and whether a command runs.
func doctor(ctx context.Context, cfg sandbox.Config, w io.Writer) error {
	fmt.Fprintf(w, "executor sandbox: mode %s, network %s\n", cfg.Mode, cfg.Network)
	fmt.Fprintln(w, "needs: Linux user, PID, mount, IPC and UTS namespaces (and a network namespace unless network is allow),")
	fmt.Fprintln(w, "       unprivileged user namespaces when not root, a mountable /proc, and Landlock (kernel 5.13+, ABI 6+ recommended).")
	fmt.Fprintf(w, "running as uid %d\n", os.Getuid())
	r := sandbox.Probe(ctx, cfg, "")
	for _, f := range r.Facilities {
		mark := "ok  "
		if !f.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  [%s] %-16s %s\n", mark, f.Name, f.Detail)
	}
	switch {
	case cfg.Mode == sandbox.ModeNone:
		fmt.Fprintln(w, "result: the sandbox is switched off (executor.sandbox.mode: none); shell and git commands run unconfined")
		return errors.New("sandbox switched off")
	case r.Err != nil:
		fmt.Fprintf(w, "result: NOT WORKING — shell and git commands will be refused: %v\n", r.Err)
		fmt.Fprintln(w, "        fix the facility above, or accept unconfined commands with executor.sandbox.mode: none")
		return r.Err
	}
	fmt.Fprintf(w, "result: working — commands run as %s\n", r.Label)
	return nil
}
