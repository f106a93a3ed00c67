// Package service is the public entry point of executor: applies approved patches inside the confined workspace.
package service

import (
	"context"
	"io"
	"net"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/rpc"
)

// Name is the service name used in logs, traces, metrics and health checks.
const Name = "executor"

// Config is the configuration of executor.
type Config struct {
	config.Common `yaml:",inline"`

	// Listener, when set, replaces services.executor.listen (tests, embedded suite).
	Listener net.Listener `yaml:"-"`
	// LogWriter receives the JSON log (default stdout).
	LogWriter io.Writer `yaml:"-"`
}

// DefaultConfig returns the defaults of the spec.
func DefaultConfig() Config {
	return Config{Common: config.DefaultCommon()}
}

// Validate checks the configuration and names the offending key.
func (c *Config) Validate() error {
	return c.Common.Validate()
}

// Run serves executor until ctx is cancelled.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	srv, err := rpcserver.NewService(ctx, rpcserver.Config{
		Name:     Name,
		Listen:   cfg.Services.Executor.Listen,
		Listener: cfg.Listener,
	}, telemetry.Config{LogLevel: cfg.LogLevel, LogWriter: cfg.LogWriter})
	if err != nil {
		return err
	}
	srv.Mount(executorv1connect.NewExecutorServiceHandler(&rpc.Handler{}, srv.HandlerOptions()...))
	return srv.Run(ctx)
}
