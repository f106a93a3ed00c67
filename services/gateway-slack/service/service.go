// Package service is the public entry point of gateway-slack: Slack Events API and interactivity ingestion, thread replies, approval buttons.
package service

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/httpapi"
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

// Run serves gateway-slack until ctx is cancelled: the Slack channel on the channel runtime.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	return channel.Run(ctx, channel.Spec{
		Service: Name, Channel: "slack", Display: "Slack",
		Common: cfg.Common, Endpoint: cfg.Services.GatewaySlack,
		Listener: cfg.Listener, PublicListener: cfg.PublicListener, LogWriter: cfg.LogWriter, Telemetry: cfg.Telemetry,
		AllowedUsers: cfg.Slack.AllowedUsers, ChatTimeout: cfg.Slack.ChatTimeout, Inbox: cfg.Slack.Inbox,
		Build: func(ctx context.Context, env channel.Env) (channel.Channel, error) {
			api, err := slackapi.New(slackapi.Config{BaseURL: cfg.Slack.APIBaseURL, Token: cfg.Slack.BotToken.Value(), Locale: cfg.Locale})
			if err != nil {
				return nil, err
			}
			botUser := cfg.Slack.BotUserID
			if botUser == "" {
				actx, cancel := context.WithTimeout(ctx, 10*time.Second)
				id, err := api.BotUserID(actx)
				cancel()
				if err != nil {
					// Bot messages carry bot_id and are ignored anyway; the id only strips our mention.
					env.Log.WarnContext(ctx, "slack.auth_test_failed", slog.Any("error", err))
				} else {
					botUser = id
				}
			}
			h := httpapi.New(cfg.Slack.SigningSecret.Value(), env.Ingest, func() string { return botUser }, env.Log)
			env.HandlePublic(http.MethodPost, EventsPath, http.HandlerFunc(h.Events))
			env.HandlePublic(http.MethodPost, InteractivePath, http.HandlerFunc(h.Interactive))
			return app.New(cfg.Locale, api, env.Once, env.Log), nil
		},
	})
}
