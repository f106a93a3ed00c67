// Command gateway-slack: Slack Events API and interactivity ingestion, chat.postMessage replies and pushes.
package main

import (
	"context"
	"os"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/service"
)

func main() {
	os.Exit(runner.Main("gateway-slack", os.Args[1:], os.Stderr, func(ctx context.Context, configPath string, _ []string) error {
		cfg := service.DefaultConfig()
		if err := config.Load(configPath, &cfg); err != nil {
			return err
		}
		return service.Run(ctx, cfg)
	}))
}
