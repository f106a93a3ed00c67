// Package service is the public entry point of gateway-slack: Slack Events API and interactivity ingestion, chat.postMessage replies and pushes.
package service

import (
	"context"
	"io"
	"net"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/rpc"
)

// Name is the service name used in logs, traces, metrics and health checks.
const Name = "gateway-slack"

// Config is the configuration of gateway-slack.
type Config struct {
	config.Common `yaml:",inline"`

	// Listener, when set, replaces services.gateway-slack.listen (tests, embedded suite).
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

// Run serves gateway-slack until ctx is cancelled.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	srv, err := rpcserver.NewService(ctx, rpcserver.Config{
		Name:     Name,
		Listen:   cfg.Services.GatewaySlack.Listen,
		Listener: cfg.Listener,
		Public:   true,
	}, telemetry.Config{LogLevel: cfg.LogLevel, LogWriter: cfg.LogWriter})
	if err != nil {
		return err
	}
	srv.Mount(gatewayv1connect.NewNotificationServiceHandler(&rpc.Handler{}, srv.HandlerOptions()...))
	return srv.Run(ctx)
}
