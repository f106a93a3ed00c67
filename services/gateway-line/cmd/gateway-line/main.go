// Command gateway-line: LINE webhook ingestion, Messaging API replies and pushes, approval buttons.
package main

import (
	"context"
	"os"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

func main() {
	os.Exit(runner.Main("gateway-line", os.Args[1:], os.Stderr, func(ctx context.Context, configPath string, _ []string) error {
		cfg := service.DefaultConfig()
		if err := config.Load(configPath, &cfg); err != nil {
			return err
		}
		return service.Run(ctx, cfg)
	}))
}
