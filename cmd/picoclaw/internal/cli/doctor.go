package cli

import (
	"context"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	executor "github.com/picoclaw-suite/picoclaw/services/executor/service"
)

// runDoctor checks this machine for what the executor's sandbox needs and runs a command in
// it; it fails when shell and git commands would be refused (or run unconfined).
func runDoctor(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "doctor", commands()["doctor"].usage)
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	cfg := executor.DefaultConfig()
	if err := config.Load(g.cfgPath, &cfg); err != nil {
		return err
	}
	return executor.SandboxDoctor(ctx, cfg, g.io.Out)
}
