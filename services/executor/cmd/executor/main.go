// Command executor: applies approved patches inside the confined workspace.
package main

import (
	"context"
	"os"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/services/executor/service"
)

func main() {
	// Shell and git commands run in a sandbox whose first process is this binary again.
	service.MaybeRunSandboxInit()
	os.Exit(runner.Main("executor", os.Args[1:], os.Stderr, func(ctx context.Context, configPath string, _ []string) error {
		cfg := service.DefaultConfig()
		if err := config.Load(configPath, &cfg); err != nil {
			return err
		}
		return service.Run(ctx, cfg)
	}))
}
