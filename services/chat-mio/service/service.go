// Package service is the public entry point of chat-mio: sessions, JobID allocation, commands, the approval conversation and the final reply.
package service

import (
	"context"
	"io"
	"net"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/rpc"
)

// Name is the service name used in logs, traces, metrics and health checks.
const Name = "chat-mio"

// Config is the configuration of chat-mio.
type Config struct {
	config.Common `yaml:",inline"`

	// Listener, when set, replaces services.chat-mio.listen (tests, embedded suite).
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

// Run serves chat-mio until ctx is cancelled.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	srv, err := rpcserver.NewService(ctx, rpcserver.Config{
		Name:     Name,
		Listen:   cfg.Services.ChatMio.Listen,
		Listener: cfg.Listener,
	}, telemetry.Config{LogLevel: cfg.LogLevel, LogWriter: cfg.LogWriter})
	if err != nil {
		return err
	}
	srv.Mount(chatv1connect.NewChatServiceHandler(&rpc.Handler{}, srv.HandlerOptions()...))
	return srv.Run(ctx)
}
