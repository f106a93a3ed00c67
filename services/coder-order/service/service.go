// Package service is the public entry point of coder-order: proposal writers order1..3 (Aka, Ao, Gin) over the provider adapters.
package service

import (
	"context"
	"io"
	"net"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1/coderv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/coder-order/internal/rpc"
)

// Name is the service name used in logs, traces, metrics and health checks.
const Name = "coder-order"

// Config is the configuration of coder-order.
type Config struct {
	config.Common `yaml:",inline"`

	// Listener, when set, replaces services.coder-order.listen (tests, embedded suite).
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

// Run serves coder-order until ctx is cancelled.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	srv, err := rpcserver.NewService(ctx, rpcserver.Config{
		Name:     Name,
		Listen:   cfg.Services.CoderOrder.Listen,
		Listener: cfg.Listener,
	}, telemetry.Config{LogLevel: cfg.LogLevel, LogWriter: cfg.LogWriter})
	if err != nil {
		return err
	}
	srv.Mount(coderv1connect.NewCoderServiceHandler(&rpc.Handler{}, srv.HandlerOptions()...))
	return srv.Run(ctx)
}
