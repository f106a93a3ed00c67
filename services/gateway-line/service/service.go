// Package service is the public entry point of gateway-line: LINE webhook ingestion, Messaging API replies and pushes, approval buttons.
package service

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/outbound"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/httpapi"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/lineapi"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/media"
)

// Name is the service name used in logs, traces, metrics and health checks.
const Name = "gateway-line"

// WebhookPath is where LINE posts events.
const WebhookPath = "/line/webhook"

// DefaultLoadingAfter is how long an answer may take before the loading animation starts: about
// the second within which a reply still feels immediate, so an answer that comes sooner (a
// command, a short answer of a quick model) shows no animation and costs no request for one.
const DefaultLoadingAfter = time.Second

// LineConfig is the `line:` section: the keys of every channel (api_base_url, allowed_users —
// LINE user ids —, chat_timeout, inbox) and LINE's own.
type LineConfig struct {
	channel.Settings `yaml:",inline"`
	// ReplyTokenMargin: the reply token is used only while the event is younger than this
	// (the token lives one minute).
	ReplyTokenMargin time.Duration `yaml:"reply_token_margin"`
	// LoadingSeconds is the loading animation's duration in 1:1 chats (5..60, multiple of 5).
	LoadingSeconds int `yaml:"loading_seconds"`
	// LoadingAfter is how long an answer may take before the loading animation starts
	// (0..10s; 0: at once, as every message arrives).
	LoadingAfter time.Duration `yaml:"loading_after"`
	// GroupMentionOnly: in group chats and rooms, only text messages that mention the bot are
	// answered (button presses always are). Images, stickers and the other kinds cannot carry a
	// mention, so with it on they are answered in 1:1 chats only — by design, not by accident.
	GroupMentionOnly bool `yaml:"group_mention_only"`
	// DataAPIBaseURL is the blob endpoint images are downloaded from.
	DataAPIBaseURL string `yaml:"data_api_base_url"`

	// PublicBaseURL is the gateway's public listener as LINE's servers reach it over HTTPS
	// (e.g. https://bot.example.com): image messages (screenshots) are served under it. Empty:
	// images are not sent as pictures; the text names where the job keeps them.
	PublicBaseURL string `yaml:"public_base_url"`
	// MediaTTL is how long an image's address stays valid.
	MediaTTL time.Duration `yaml:"media_ttl"`

	ChannelSecret      config.Secret `yaml:"-" env:"LINE_CHANNEL_SECRET"`
	ChannelAccessToken config.Secret `yaml:"-" env:"LINE_CHANNEL_ACCESS_TOKEN"`
}

// InboxConfig is the inbox part of the section.
type InboxConfig = inbox.Settings

// Config is the configuration of gateway-line.
type Config struct {
	config.Common `yaml:",inline"`
	Line          LineConfig `yaml:"line"`
	// Images: max_bytes caps an image downloaded from LINE.
	Images config.Images `yaml:"images"`
	// Wiring: listeners, log writer and telemetry handed over by tests and the embedded suite.
	channel.Wiring `yaml:"-"`
}

// DefaultConfig returns the defaults of the spec.
func DefaultConfig() Config {
	return Config{Common: config.DefaultCommon(), Line: LineConfig{
		Settings:         channel.DefaultSettings("https://api.line.me"),
		ReplyTokenMargin: 50 * time.Second,
		LoadingSeconds:   20,
		LoadingAfter:     DefaultLoadingAfter,
		GroupMentionOnly: true,
		MediaTTL:         24 * time.Hour,
		DataAPIBaseURL:   "https://api-data.line.me",
	}, Images: config.DefaultImages()}
}

// Validate checks the configuration and names the offending key.
func (c *Config) Validate() error {
	var errs config.Errors
	errs.Add(c.Common.Validate())
	errs.Add(c.Services.GatewayLine.ValidatePublic(Name))
	// The inbox, the outbox and the sent marks live on state.engine (pkg/channel).
	errs.Add(config.CheckLinked("state.engine", c.State.Engine))
	l := c.Line
	errs.Add(l.Settings.Validate("line"))
	if l.ReplyTokenMargin <= 0 || l.ReplyTokenMargin >= time.Minute {
		errs.Addf("line.reply_token_margin", "must be between 0 and 1m (the reply token lives one minute), got %s", l.ReplyTokenMargin)
	}
	if u, err := url.Parse(l.DataAPIBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs.Addf("line.data_api_base_url", "must be an http(s) URL, got %q", l.DataAPIBaseURL)
	}
	errs.Add(c.Images.Validate())
	if l.LoadingSeconds < 5 || l.LoadingSeconds > 60 {
		errs.Addf("line.loading_seconds", "must be 5..60, got %d", l.LoadingSeconds)
	}
	if l.LoadingAfter < 0 || l.LoadingAfter > 10*time.Second {
		errs.Addf("line.loading_after", "must be between 0 and 10s, got %s", l.LoadingAfter)
	}
	if u, err := url.Parse(l.PublicBaseURL); l.PublicBaseURL != "" && (err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "") {
		errs.Addf("line.public_base_url", "must be an https URL without query (LINE fetches images only over HTTPS), got %q", l.PublicBaseURL)
	}
	if l.MediaTTL < time.Minute || l.MediaTTL > 7*24*time.Hour {
		errs.Addf("line.media_ttl", "must be between 1m and 168h, got %s", l.MediaTTL)
	}
	errs.Add(channel.ValidateSecret("line.channel_secret", "LINE_CHANNEL_SECRET", l.ChannelSecret))
	errs.Add(channel.ValidateSecret("line.channel_access_token", "LINE_CHANNEL_ACCESS_TOKEN", l.ChannelAccessToken))
	return errs.Err()
}

// Run serves gateway-line until ctx is cancelled: the LINE channel on the channel runtime.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	return channel.Run(ctx, channel.Spec{
		Service: Name, Channel: "line", Display: "LINE",
		Common: cfg.Common,
		Wiring: cfg.Wiring, Settings: cfg.Line.Settings, MaxImageBytes: cfg.Images.MaxBytes,
		Build: func(_ context.Context, env channel.Env) (channel.Channel, error) {
			line, err := lineapi.New(lineapi.Config{BaseURL: cfg.Line.APIBaseURL, DataBaseURL: cfg.Line.DataAPIBaseURL,
				Token: cfg.Line.ChannelAccessToken.Value(), HTTPClient: outbound.Client(20*time.Second, outbound.Traced(env.Telemetry.TracerProvider))})
			if err != nil {
				return nil, err
			}
			env.HandlePublic(http.MethodPost, WebhookPath, httpapi.NewWebhook(cfg.Line.ChannelSecret.Value(), env.Ingest, env.Log).MentionOnlyInGroups(cfg.Line.GroupMentionOnly))
			var images domain.Publisher
			if cfg.Line.PublicBaseURL != "" {
				store, err := media.New(cfg.Line.PublicBaseURL, cfg.Line.MediaTTL, nil)
				if err != nil {
					return nil, err
				}
				env.HandlePublic(http.MethodGet, media.Path+"{name}", store)
				images = store.Publish
			}
			return app.New(app.Config{ReplyTokenMargin: cfg.Line.ReplyTokenMargin, LoadingSeconds: cfg.Line.LoadingSeconds,
				LoadingAfter: cfg.Line.LoadingAfter,
				Locale:       cfg.Locale, Images: images, Contents: line}, line, env.Log), nil
		},
	})
}
