// Command approval: content-bound approvals, Auto-Approve policy and the audit log.
//
// Usage: approval [-config file.yaml] [migrate]. Without a subcommand it serves (applying
// pending migrations first); `migrate` only applies the migrations and exits.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/services/approval/service"
)

func main() {
	os.Exit(runner.Main("approval", os.Args[1:], os.Stderr, func(ctx context.Context, configPath string, args []string) error {
		cfg := service.DefaultConfig()
		if err := config.Load(configPath, &cfg); err != nil {
			return err
		}
		switch {
		case len(args) == 0:
			return service.Run(ctx, cfg)
		case len(args) == 1 && args[0] == "migrate":
			return service.Migrate(ctx, cfg)
		default:
			return fmt.Errorf("unknown arguments %q (the only subcommand is migrate)", args)
		}
	}))
}
