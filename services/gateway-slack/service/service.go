// Package service is the public entry point of gateway-slack: Slack Events API and interactivity ingestion, thread replies, approval buttons.
package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid/redisalloc"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/httpapi"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/rpc"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/slackapi"
)

// Name is the service name used in logs, traces, metrics and health checks.
const Name = "gateway-slack"

// Paths Slack posts to.
const (
	EventsPath      = "/slack/events"
	InteractivePath = "/slack/interactive"
)

// SlackConfig is the `slack:` section.
type SlackConfig struct {
	// APIBaseURL is the Web API endpoint.
	APIBaseURL string `yaml:"api_base_url"`
	// AllowedUsers are the Slack user ids that may use the assistant; empty means nobody.
	AllowedUsers []string `yaml:"allowed_users"`
	// BotUserID is the bot's own user id; when empty it is asked from auth.test at start.
	BotUserID string `yaml:"bot_user_id"`
	// ChatTimeout bounds one call to chat-mio.
	ChatTimeout time.Duration `yaml:"chat_timeout"`
	Inbox       InboxConfig   `yaml:"inbox"`

	SigningSecret config.Secret `yaml:"-" env:"SLACK_SIGNING_SECRET"`
	BotToken      config.Secret `yaml:"-" env:"SLACK_BOT_TOKEN"`
}

// InboxConfig is the inbox part of the section.
type InboxConfig = inbox.Settings

// Config is the configuration of gateway-slack.
type Config struct {
	config.Common `yaml:",inline"`
	Slack         SlackConfig `yaml:"slack"`

	// PublicListener, when set, replaces services.gateway-slack.public_listen (tests, embedded suite).
	PublicListener net.Listener `yaml:"-"`
	// Listener, when set, replaces services.gateway-slack.listen (tests, embedded suite).
	Listener net.Listener `yaml:"-"`
	// LogWriter receives the JSON log (default stdout).
	LogWriter io.Writer `yaml:"-"`
	// Telemetry, when set, adds span processors (tests).
	Telemetry telemetry.Config `yaml:"-"`
}

// DefaultConfig returns the defaults of the spec.
func DefaultConfig() Config {
	return Config{Common: config.DefaultCommon(), Slack: SlackConfig{
		APIBaseURL:  "https://slack.com/api",
		ChatTimeout: 120 * time.Second,
		Inbox:       inbox.DefaultSettings(),
	}}
}

// Validate checks the configuration and names the offending key.
func (c *Config) Validate() error {
	var errs config.Errors
	errs.Add(c.Common.Validate())
	errs.Add(c.Services.GatewaySlack.ValidatePublic(Name))
	s := c.Slack
	if u, err := url.Parse(s.APIBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs.Addf("slack.api_base_url", "must be an http(s) URL, got %q", s.APIBaseURL)
	}
	if s.ChatTimeout <= 0 {
		errs.Addf("slack.chat_timeout", "must be positive, got %s", s.ChatTimeout)
	}
	errs.Add(config.Prefix("slack.inbox", s.Inbox.Validate()))
	if !s.SigningSecret.Set() {
		errs.Addf("slack.signing_secret", "must be set in the environment variable SLACK_SIGNING_SECRET")
	} else if err := config.CheckSecret("SLACK_SIGNING_SECRET", s.SigningSecret.Value(), config.MinSecretBytes); err != nil {
		errs.Addf("slack.signing_secret", "%v", err)
	}
	if !s.BotToken.Set() {
		errs.Addf("slack.bot_token", "must be set in the environment variable SLACK_BOT_TOKEN")
	} else if err := config.CheckSecret("SLACK_BOT_TOKEN", s.BotToken.Value(), config.MinSecretBytes); err != nil {
		errs.Addf("slack.bot_token", "%v", err)
	}
	return errs.Err()
}

// Run serves gateway-slack until ctx is cancelled.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	tcfg := cfg.Telemetry
	tcfg.LogLevel, tcfg.LogWriter = cfg.LogLevel, cfg.LogWriter
	creds, err := svcauth.Load(Name, cfg.Auth)
	if err != nil {
		return err
	}
	srv, err := rpcserver.NewService(ctx, rpcserver.Config{
		Name:        Name,
		Listen:      cfg.Services.GatewaySlack.Listen,
		Listener:    cfg.Listener,
		Heartbeat:   rpcserver.HeartbeatFrom(cfg.Common),
		Credentials: creds,
		Limits:      rpcserver.LimitsFrom(cfg.Common),
		Pprof:       cfg.Debug.Pprof,
		// The webhook is the only public surface; the notification API stays internal.
		PublicListen:   cfg.Services.GatewaySlack.PublicListen,
		PublicListener: cfg.PublicListener,
	}, tcfg)
	if err != nil {
		return err
	}
	log := srv.Logger()
	tel := srv.Telemetry()
	if len(cfg.Slack.AllowedUsers) == 0 {
		log.WarnContext(ctx, "slack.allowlist_empty", slog.String("key", "slack.allowed_users"),
			slog.String("effect", "every sender gets a refusal until user ids are listed"))
	}
	rdb := redis.NewClient(&redis.Options{Addr: cfg.Redis.Addr, DB: cfg.Redis.DB, Password: cfg.Redis.Password.Value()})
	defer rdb.Close()
	metrics, err := inbox.NewMetrics(srv.Registry())
	if err != nil {
		return err
	}
	inboxCfg := inbox.Config{Stream: cfg.Redis.KeyPrefix + "inbox:slack", Group: Name, DedupeTTL: cfg.Slack.Inbox.DedupeTTL, Metrics: metrics,
		Seal: creds.DeriveKey("inbox")}
	store, err := inbox.NewStore(rdb, inboxCfg)
	if err != nil {
		return err
	}
	api, err := slackapi.New(slackapi.Config{BaseURL: cfg.Slack.APIBaseURL, Token: cfg.Slack.BotToken.Value(), Locale: cfg.Locale})
	if err != nil {
		return err
	}
	botUser := cfg.Slack.BotUserID
	if botUser == "" {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		id, err := api.BotUserID(actx)
		cancel()
		if err != nil {
			// Bot messages carry bot_id and are ignored anyway; the id only strips our mention.
			log.WarnContext(ctx, "slack.auth_test_failed", slog.Any("error", err))
		} else {
			botUser = id
		}
	}
	chatOpts, err := rpcserver.ClientOptions(tel, cfg.Slack.ChatTimeout, svcauth.Client(creds, svcauth.ChatMio))
	if err != nil {
		return err
	}
	chat := chatlink.New(chatv1connect.NewChatServiceClient(rpcserver.NewHTTPClient(), cfg.Services.ChatMio.URL, chatOpts...), "slack", creds)
	marks := inbox.NewMarks(rdb, cfg.Redis.KeyPrefix+"slack:sent:", cfg.Slack.Inbox.DedupeTTL)
	proc := app.NewProcessor(app.Config{Locale: cfg.Locale, Allow: domain.NewAllowlist(cfg.Slack.AllowedUsers)},
		chat, api, marks, log, tel.TracerProvider, tel.Propagator)
	consumer, err := inbox.NewConsumer(rdb, inboxCfg, cfg.Slack.Inbox.ConsumerConfig(Name, proc.GiveUp, log), proc.Handle)
	if err != nil {
		return err
	}
	if err := consumer.EnsureGroup(ctx); err != nil {
		return fmt.Errorf("%s: redis %s: %w", Name, cfg.Redis.Addr, err)
	}
	loc, err := cfg.Location()
	if err != nil {
		return err
	}
	// Same counter and key prefix as chat-mio, so ids stay unique whoever allocates them.
	jobs := redisalloc.New(rdb, loc, cfg.Redis.KeyPrefix, redisalloc.WithLogger(log))
	h := httpapi.New(cfg.Slack.SigningSecret.Value(), store, jobs, func() string { return botUser }, log, tel.TracerProvider, tel.Propagator)
	srv.HandlePublic(http.MethodPost, EventsPath, http.HandlerFunc(h.Events))
	srv.HandlePublic(http.MethodPost, InteractivePath, http.HandlerFunc(h.Interactive))
	srv.Mount(gatewayv1connect.NewNotificationServiceHandler(rpc.New(proc, log), srv.HandlerOptions()...))
	srv.AddReadiness("redis", store.Ping)

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var consumerErr error
	wg.Go(func() {
		if err := consumer.Run(cctx); err != nil {
			consumerErr = err
			cancel()
		}
	})
	err = srv.Run(cctx)
	cancel()
	wg.Wait()
	return errors.Join(err, consumerErr)
}
