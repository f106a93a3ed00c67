// Package service is the public entry point of gateway-line: LINE webhook ingestion, Messaging API replies and pushes, approval buttons.
package service

import (
	"context"
	"io"
	"net"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/rpc"
)

// Name is the service name used in logs, traces, metrics and health checks.
const Name = "gateway-line"

// Config is the configuration of gateway-line.
type Config struct {
	config.Common `yaml:",inline"`

	// Listener, when set, replaces services.gateway-line.listen (tests, embedded suite).
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

// Run serves gateway-line until ctx is cancelled.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	srv, err := rpcserver.NewService(ctx, rpcserver.Config{
		Name:     Name,
		Listen:   cfg.Services.GatewayLine.Listen,
		Listener: cfg.Listener,
		Public:   true,
	}, telemetry.Config{LogLevel: cfg.LogLevel, LogWriter: cfg.LogWriter})
	if err != nil {
		return err
	}
	srv.Mount(gatewayv1connect.NewNotificationServiceHandler(&rpc.Handler{}, srv.HandlerOptions()...))
	return srv.Run(ctx)
}
