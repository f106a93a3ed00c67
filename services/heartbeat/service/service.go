// Package service is the public entry point of heartbeat: liveness of every service and agent, the aggregated report and alerts.
package service

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/httpapi"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/notify"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/rpc"
)

// Name is the service name used in logs, traces, metrics and health checks.
const Name = "heartbeat"

// Config is the configuration of heartbeat. Its own keys live in the suite's heartbeat section
// next to the sender's (enabled, interval_sec, timeout_sec).
type Config struct {
	config.Common `yaml:",inline"`

	// ReportToChat turns on alerts to AdminSession. It is a key of the heartbeat section, which
	// the common part owns: the config tag places it there (pkg/config).
	ReportToChat bool `yaml:"-" config:"heartbeat.report_to_chat" env:"PICOCLAW_HEARTBEAT_REPORT_TO_CHAT"`
	// AdminSession receives the alerts: line:<id> or slack:<channel>:<thread_ts>.
	AdminSession string `yaml:"-" config:"heartbeat.admin_session" env:"PICOCLAW_HEARTBEAT_ADMIN_SESSION"`
	// AlertAfter is how many unhealthy beats in a row open an incident (a timeout opens one at
	// once); RecoverAfter how many healthy beats in a row close it. Every replica of a service
	// counts by itself.
	AlertAfter   int `yaml:"-" config:"heartbeat.alert_after" env:"PICOCLAW_HEARTBEAT_ALERT_AFTER"`
	RecoverAfter int `yaml:"-" config:"heartbeat.recover_after" env:"PICOCLAW_HEARTBEAT_RECOVER_AFTER"`

	// Wiring: listeners, log writer and telemetry handed over by tests and the embedded suite.
	rpcserver.Wiring `yaml:"-"`
}

// DefaultConfig returns the defaults of the spec.
func DefaultConfig() Config {
	return Config{Common: config.DefaultCommon(), AlertAfter: 2, RecoverAfter: 2}
}

// Validate checks the configuration and names the offending key.
func (c *Config) Validate() error {
	var errs config.Errors
	errs.Add(c.Common.Validate())
	errs.Add(config.CheckLinked("state.engine", c.State.Engine))
	if c.AlertAfter < 1 {
		errs.Addf("heartbeat.alert_after", "must be at least 1, got %d", c.AlertAfter)
	}
	if c.RecoverAfter < 1 {
		errs.Addf("heartbeat.recover_after", "must be at least 1, got %d", c.RecoverAfter)
	}
	if c.ReportToChat {
		if _, err := notify.GatewayURL(c.AdminSession, c.Services.GatewayLine.URL, c.Services.GatewaySlack.URL); err != nil {
			errs.Addf("heartbeat.admin_session", "%v (required when report_to_chat is on)", err)
		}
	}
	return errs.Err()
}

// sweepEvery looks for silent agents often enough that a timeout is noticed well within one
// interval of its deadline, without polling Redis needlessly.
func sweepEvery(timeout time.Duration) time.Duration {
	return min(max(timeout/10, 250*time.Millisecond), 5*time.Second)
}

// openStore opens the agent store on the configured state engine: Redis, or the embedded
// SQLite file (no Redis client at all then). Readiness checks the engine.
func openStore(ctx context.Context, cfg Config, srv *rpcserver.Server) (app.Store, func(), error) {
	if cfg.State.SQLite() {
		return openSQLiteStore(ctx, cfg, srv)
	}
	return openRedisStore(cfg, srv)
}

// Run serves heartbeat until ctx is cancelled.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	srv, err := rpcserver.Start(ctx, rpcserver.Setup{Name: Name, Common: cfg.Common, Wiring: cfg.Wiring})
	if err != nil {
		return err
	}
	loc := srv.Location()
	log := srv.Logger()
	st, closeStore, err := openStore(ctx, cfg, srv)
	if err != nil {
		return srv.Abort(ctx, err)
	}
	defer closeStore()

	timeout := time.Duration(cfg.HeartbeatSender.TimeoutSec) * time.Second
	var alerter *app.Alerter
	if cfg.ReportToChat {
		url, err := notify.GatewayURL(cfg.AdminSession, cfg.Services.GatewayLine.URL, cfg.Services.GatewaySlack.URL)
		if err != nil {
			return err
		}
		target := svcauth.GatewayLine
		if strings.HasPrefix(cfg.AdminSession, "slack:") {
			target = svcauth.GatewaySlack
		}
		opts, err := srv.PeerOptions(10*time.Second, target)
		if err != nil {
			return err
		}
		alerter = app.NewAlerter(app.AlertConfig{
			Locale: app.ParseLocale(cfg.Locale), Timeout: timeout, Env: app.Env{Location: loc, Logger: log},
		}, notify.NewGateway(rpcserver.NewHTTPClient(), url, cfg.AdminSession, opts...))
	}
	svc := app.New(app.Config{Timeout: timeout, SweepEvery: sweepEvery(timeout), Env: app.Env{Location: loc, Logger: log},
		Hysteresis: domain.Hysteresis{Open: cfg.AlertAfter, Close: cfg.RecoverAfter}}, st, app.NewBroker(), alerter)

	// Beats arrive all the time and reports are reads of the picture; counting them would show
	// the heartbeat service busy whenever anyone looks.
	srv.IgnoreInHeartbeat(heartbeatv1connect.HeartbeatServiceBeatProcedure, heartbeatv1connect.HeartbeatServiceReportProcedure)
	srv.Mount(heartbeatv1connect.NewHeartbeatServiceHandler(&rpc.Handler{App: svc, Log: log}, srv.HandlerOptions()...))
	srv.HandleHTTP(http.MethodGet, httpapi.StatusPath, httpapi.Status(svc, log))

	bgCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = svc.Run(bgCtx) }()
	if alerter != nil {
		wg.Add(1)
		go func() { defer wg.Done(); _ = alerter.Run(bgCtx) }()
	}
	err = srv.Run(ctx)
	stop()
	wg.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
