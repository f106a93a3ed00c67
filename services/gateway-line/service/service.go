// Package service is the public entry point of gateway-line: LINE webhook ingestion, Messaging API replies and pushes, approval buttons.
package service

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/httpapi"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/lineapi"
)

// Name is the service name used in logs, traces, metrics and health checks.
const Name = "gateway-line"

// WebhookPath is where LINE posts events.
const WebhookPath = "/line/webhook"

// LineConfig is the `line:` section.
type LineConfig struct {
	// APIBaseURL is the Messaging API endpoint.
	APIBaseURL string `yaml:"api_base_url"`
	// ReplyTokenMargin: the reply token is used only while the event is younger than this
	// (the token lives one minute).
	ReplyTokenMargin time.Duration `yaml:"reply_token_margin"`
	// LoadingSeconds is the loading animation's duration in 1:1 chats (5..60, multiple of 5).
	LoadingSeconds int `yaml:"loading_seconds"`
	// AllowedUsers are the LINE user ids that may use the assistant; empty means nobody.
	AllowedUsers []string `yaml:"allowed_users"`
	// ChatTimeout bounds one call to chat-mio.
	ChatTimeout time.Duration `yaml:"chat_timeout"`
	Inbox       InboxConfig   `yaml:"inbox"`

	ChannelSecret      config.Secret `yaml:"-" env:"LINE_CHANNEL_SECRET"`
	ChannelAccessToken config.Secret `yaml:"-" env:"LINE_CHANNEL_ACCESS_TOKEN"`
}

// InboxConfig is the inbox part of the section.
type InboxConfig = inbox.Settings

// Config is the configuration of gateway-line.
type Config struct {
	config.Common `yaml:",inline"`
	Line          LineConfig `yaml:"line"`

	// PublicListener, when set, replaces services.gateway-line.public_listen (tests, embedded suite).
	PublicListener net.Listener `yaml:"-"`
	// Listener, when set, replaces services.gateway-line.listen (tests, embedded suite).
	Listener net.Listener `yaml:"-"`
	// LogWriter receives the JSON log (default stdout).
	LogWriter io.Writer `yaml:"-"`
	// Telemetry, when set, adds span processors (tests).
	Telemetry telemetry.Config `yaml:"-"`
}

// DefaultConfig returns the defaults of the spec.
func DefaultConfig() Config {
	return Config{Common: config.DefaultCommon(), Line: LineConfig{
		APIBaseURL:       "https://api.line.me",
		ReplyTokenMargin: 50 * time.Second,
		LoadingSeconds:   20,
		ChatTimeout:      120 * time.Second,
		Inbox:            inbox.DefaultSettings(),
	}}
}

// Validate checks the configuration and names the offending key.
func (c *Config) Validate() error {
	var errs config.Errors
	errs.Add(c.Common.Validate())
	errs.Add(c.Services.GatewayLine.ValidatePublic(Name))
	l := c.Line
	if u, err := url.Parse(l.APIBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs.Addf("line.api_base_url", "must be an http(s) URL, got %q", l.APIBaseURL)
	}
	if l.ReplyTokenMargin <= 0 || l.ReplyTokenMargin >= time.Minute {
		errs.Addf("line.reply_token_margin", "must be between 0 and 1m (the reply token lives one minute), got %s", l.ReplyTokenMargin)
	}
	if l.LoadingSeconds < 5 || l.LoadingSeconds > 60 {
		errs.Addf("line.loading_seconds", "must be 5..60, got %d", l.LoadingSeconds)
	}
	if l.ChatTimeout <= 0 {
		errs.Addf("line.chat_timeout", "must be positive, got %s", l.ChatTimeout)
	}
	errs.Add(config.Prefix("line.inbox", l.Inbox.Validate()))
	if !l.ChannelSecret.Set() {
		errs.Addf("line.channel_secret", "must be set in the environment variable LINE_CHANNEL_SECRET")
	} else if err := config.CheckSecret("LINE_CHANNEL_SECRET", l.ChannelSecret.Value(), config.MinSecretBytes); err != nil {
		errs.Addf("line.channel_secret", "%v", err)
	}
	if !l.ChannelAccessToken.Set() {
		errs.Addf("line.channel_access_token", "must be set in the environment variable LINE_CHANNEL_ACCESS_TOKEN")
	} else if err := config.CheckSecret("LINE_CHANNEL_ACCESS_TOKEN", l.ChannelAccessToken.Value(), config.MinSecretBytes); err != nil {
		errs.Addf("line.channel_access_token", "%v", err)
	}
	return errs.Err()
}

// Run serves gateway-line until ctx is cancelled: the LINE channel on the channel runtime.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	return channel.Run(ctx, channel.Spec{
		Service: Name, Channel: "line", Display: "LINE",
		Common: cfg.Common, Endpoint: cfg.Services.GatewayLine,
		Listener: cfg.Listener, PublicListener: cfg.PublicListener, LogWriter: cfg.LogWriter, Telemetry: cfg.Telemetry,
		AllowedUsers: cfg.Line.AllowedUsers, ChatTimeout: cfg.Line.ChatTimeout, Inbox: cfg.Line.Inbox,
		Build: func(_ context.Context, env channel.Env) (channel.Channel, error) {
			line, err := lineapi.New(lineapi.Config{BaseURL: cfg.Line.APIBaseURL, Token: cfg.Line.ChannelAccessToken.Value()})
			if err != nil {
				return nil, err
			}
			env.HandlePublic(http.MethodPost, WebhookPath, httpapi.NewWebhook(cfg.Line.ChannelSecret.Value(), env.Ingest, env.Log))
			return app.New(app.Config{ReplyTokenMargin: cfg.Line.ReplyTokenMargin, LoadingSeconds: cfg.Line.LoadingSeconds,
				Locale: cfg.Locale}, line, env.Log), nil
		},
	})
}
