// Package service is the public entry point of gateway-slack: Slack Events API and interactivity ingestion, thread replies, approval buttons.
package service

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/outbound"
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

// SlackConfig is the `slack:` section: the keys of every channel (api_base_url, allowed_users —
// Slack user ids —, chat_timeout, inbox) and Slack's own.
type SlackConfig struct {
	channel.Settings `yaml:",inline"`
	// BotUserID is the bot's own user id; when empty it is asked from auth.test at start.
	BotUserID string `yaml:"bot_user_id"`
	// FilesBaseURL is the only host shared files are downloaded from (with the bot token).
	FilesBaseURL string `yaml:"files_base_url"`

	SigningSecret config.Secret `yaml:"-" env:"SLACK_SIGNING_SECRET"`
	BotToken      config.Secret `yaml:"-" env:"SLACK_BOT_TOKEN"`
}

// InboxConfig is the inbox part of the section.
type InboxConfig = inbox.Settings

// Config is the configuration of gateway-slack.
type Config struct {
	config.Common `yaml:",inline"`
	Slack         SlackConfig `yaml:"slack"`
	// Images: max_bytes caps a shared image downloaded from Slack.
	Images config.Images `yaml:"images"`
	// Wiring: listeners, log writer and telemetry handed over by tests and the embedded suite.
	channel.Wiring `yaml:"-"`
}

// DefaultConfig returns the defaults of the spec.
func DefaultConfig() Config {
	return Config{Common: config.DefaultCommon(), Slack: SlackConfig{Settings: channel.DefaultSettings("https://slack.com/api"),
		FilesBaseURL: "https://files.slack.com"}, Images: config.DefaultImages()}
}

// Validate checks the configuration and names the offending key.
func (c *Config) Validate() error {
	var errs config.Errors
	errs.Add(c.Common.Validate())
	errs.Add(c.Services.GatewaySlack.ValidatePublic(Name))
	// The inbox, the outbox and the sent marks live on state.engine (pkg/channel).
	errs.Add(config.CheckLinked("state.engine", c.State.Engine))
	errs.Add(c.Slack.Settings.Validate("slack"))
	if u, err := url.Parse(c.Slack.FilesBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs.Addf("slack.files_base_url", "must be an http(s) URL, got %q", c.Slack.FilesBaseURL)
	}
	errs.Add(c.Images.Validate())
	errs.Add(channel.ValidateSecret("slack.signing_secret", "SLACK_SIGNING_SECRET", c.Slack.SigningSecret))
	errs.Add(channel.ValidateSecret("slack.bot_token", "SLACK_BOT_TOKEN", c.Slack.BotToken))
	return errs.Err()
}

// Run serves gateway-slack until ctx is cancelled: the Slack channel on the channel runtime.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	return channel.Run(ctx, channel.Spec{
		Service: Name, Channel: "slack", Display: "Slack",
		Common: cfg.Common,
		Wiring: cfg.Wiring, Settings: cfg.Slack.Settings, MaxImageBytes: cfg.Images.MaxBytes,
		Build: func(ctx context.Context, env channel.Env) (channel.Channel, error) {
			api, err := slackapi.New(slackapi.Config{BaseURL: cfg.Slack.APIBaseURL, Token: cfg.Slack.BotToken.Value(), Locale: cfg.Locale,
				HTTPClient: outbound.Client(20*time.Second, outbound.Traced(env.Telemetry.TracerProvider))})
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
			files, err := slackapi.NewFiles(cfg.Slack.FilesBaseURL, cfg.Slack.BotToken.Value(), outbound.Traced(env.Telemetry.TracerProvider))
			if err != nil {
				return nil, err
			}
			return app.New(cfg.Locale, api, env.Once, env.Log).WithFiles(files), nil
		},
	})
}
