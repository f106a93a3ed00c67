// Command approval: content-bound approvals, Auto-Approve policy and the audit log.
package main

import (
	"context"
	"os"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/services/approval/service"
)

func main() {
	os.Exit(runner.Main("approval", os.Args[1:], os.Stderr, func(ctx context.Context, configPath string, _ []string) error {
		cfg := service.DefaultConfig()
		if err := config.Load(configPath, &cfg); err != nil {
			return err
		}
		return service.Run(ctx, cfg)
	}))
}
