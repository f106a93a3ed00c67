package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	executor "github.com/picoclaw-suite/picoclaw/services/executor/service"
)

// runDoctor checks this machine for what the executor's sandbox needs and runs a command in
// it; it fails when shell and git commands would be refused (or run unconfined).
func newDoctorCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "doctor", Short: "check that this machine can run the executor's sandbox", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDoctor(cmd.Context(), g) },
	}
}

func runDoctor(ctx context.Context, g *globals) error {
	cfg := executor.DefaultConfig()
	if err := config.Load(g.cfgPath, &cfg); err != nil {
		return err
	}
	return executor.SandboxDoctor(ctx, cfg, g.io.Out)
}
