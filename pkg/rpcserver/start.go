package rpcserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// Wiring is what tests and the embedded suite hand a service besides its configuration; every
// service Config embeds it (yaml:"-").
type Wiring struct {
	// Listener, when set, replaces the service's listen (tests, embedded suite).
	Listener net.Listener
	// PublicListener, when set, replaces the service's public_listen.
	PublicListener net.Listener
	// LogWriter receives the JSON log (default stdout).
	LogWriter io.Writer
	// Telemetry adds options (tests add span processors); the log level and writer are the
	// service's log_level and LogWriter.
	Telemetry telemetry.Config
}

// Setup is what a service's Run hands to Start: its name, its validated common configuration
// and its wiring.
type Setup struct {
	// Name is the service name; it names the identity (auth) and the endpoint (services.<name>).
	Name   string
	Common config.Common
	// Public opens the service's public listener, services.<name>.public_listen (webhooks,
	// REST, console); the Connect API stays on the internal one.
	Public bool
	Wiring Wiring
	// MaxBodyBytes raises the internal listener's cap on request bodies (default 1 MiB) for a
	// service whose callers send images; the public listener keeps the default.
	MaxBodyBytes int64
}

// Start loads the service's credentials and builds its telemetry and server from the common
// configuration: listeners, limits, heartbeat sender and pprof. Run flushes the telemetry;
// before Run is reached, Abort does.
func Start(ctx context.Context, s Setup) (*Server, error) {
	loc, err := s.Common.Location()
	if err != nil {
		return nil, fmt.Errorf("timezone: %w", err)
	}
	creds, err := svcauth.Load(s.Name, s.Common.Auth)
	if err != nil {
		return nil, err
	}
	ep, _ := s.Common.Services.Endpoint(s.Name)
	cfg := Config{
		Name:         s.Name,
		Listen:       ep.Listen,
		Listener:     s.Wiring.Listener,
		Heartbeat:    HeartbeatFrom(s.Common),
		Credentials:  creds,
		Limits:       LimitsFrom(s.Common),
		Pprof:        s.Common.Debug.Pprof,
		Replica:      s.Common.Replica,
		MaxBodyBytes: s.MaxBodyBytes,
	}
	if s.Public {
		cfg.PublicListen, cfg.PublicListener = ep.PublicListen, s.Wiring.PublicListener
	}
	tcfg := s.Wiring.Telemetry
	tcfg.LogLevel, tcfg.LogWriter = s.Common.LogLevel, s.Wiring.LogWriter
	srv, err := NewService(ctx, cfg, tcfg)
	if err != nil {
		return nil, err
	}
	srv.loc = loc
	return srv, nil
}

// Location is the suite's time zone (the timezone key), for day boundaries and display.
func (s *Server) Location() *time.Location { return s.loc }

// Credentials are the service's own: its identity towards peers and the keys it verifies
// callers with.
func (s *Server) Credentials() *svcauth.Credentials { return s.cfg.Credentials }

// PeerOptions are the client options of calls from this service to peer: the suite's
// ClientOptions with a token made out to peer.
func (s *Server) PeerOptions(defaultTimeout time.Duration, peer string) ([]connect.ClientOption, error) {
	return ClientOptions(s.tel, defaultTimeout, svcauth.Client(s.cfg.Credentials, peer))
}

// Abort is for errors between Start and Run: Run would have flushed the telemetry the server
// owns, so Abort does, and returns err joined with any flush error.
func (s *Server) Abort(ctx context.Context, err error) error {
	if !s.ownsTelemetry {
		return err
	}
	return errors.Join(err, s.tel.Shutdown(context.WithoutCancel(ctx)))
}
