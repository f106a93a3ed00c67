// Command chat-mio: sessions, JobID allocation, commands, the approval conversation and the final reply.
package main

import (
	"context"
	"os"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/service"
)

func main() {
	os.Exit(runner.Main("chat-mio", os.Args[1:], os.Stderr, func(ctx context.Context, configPath string, _ []string) error {
		cfg := service.DefaultConfig()
		if err := config.Load(configPath, &cfg); err != nil {
			return err
		}
		return service.Run(ctx, cfg)
	}))
}
