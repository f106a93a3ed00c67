// Package slackapi posts and updates thread messages through the Slack Web API (slack-go).
package slackapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/outbound"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/domain"
)

// Config configures the client.
type Config struct {
	// BaseURL is the Web API endpoint (https://slack.com/api, a local server in tests).
	BaseURL string
	Token   string
	// HTTPClient defaults to a client with a 20 s timeout.
	HTTPClient *http.Client
	Locale     string
}

// Client is a Web API client, safe for concurrent use.
type Client struct {
	api   *slack.Client
	texts domain.Texts
}

// New returns a client.
func New(cfg Config) (*Client, error) {
	if cfg.Token == "" {
		return nil, errors.New("slackapi: bot token is required")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://slack.com/api"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = outbound.Client(20 * time.Second)
	}
	api := slack.New(cfg.Token, slack.OptionAPIURL(strings.TrimRight(cfg.BaseURL, "/")+"/"), slack.OptionHTTPClient(cfg.HTTPClient))
	return &Client{api: api, texts: domain.TextsFor(cfg.Locale)}, nil
}

// BotUserID asks auth.test who the bot is.
func (c *Client) BotUserID(ctx context.Context) (string, error) {
	res, err := c.api.AuthTestContext(ctx)
	if err != nil {
		return "", classify("auth.test", err)
	}
	return res.UserID, nil
}

// sendEvent is the metadata event type of every message the gateway posts; its payload's key
// is the message's send key (Posted finds a message by it).
const sendEvent = "picoclaw_send"

// Post posts msg in the thread with its send key in the message's metadata and returns its ts.
func (c *Client) Post(ctx context.Context, channel, threadTS string, msg domain.OutMessage, key string) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(msg.Text, false), slack.MsgOptionDisableLinkUnfurl(),
		slack.MsgOptionMetadata(slack.SlackMetadata{EventType: sendEvent, EventPayload: map[string]any{"key": key}})}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	switch {
	case msg.Card != nil:
		opts = append(opts, slack.MsgOptionBlocks(CardBlocks(msg, c.texts)...))
	case len(msg.Buttons) > 0:
		opts = append(opts, slack.MsgOptionBlocks(c.blocks(msg)...))
	}
	_, ts, err := c.api.PostMessageContext(ctx, channel, opts...)
	if err != nil {
		return "", classify("chat.postMessage", err)
	}
	return ts, nil
}

// postedPages bounds the pages of a thread (200 messages each) Posted reads.
const postedPages = 5

// Posted finds the message posted under key in the thread (in the channel's latest messages
// when threadTS is empty) and returns its ts, or "" when there is none. Slack has no
// idempotency key: a post whose answer was lost (a 5xx, a dropped connection) may have been
// made, and a retry looks here first instead of posting it again.
func (c *Client) Posted(ctx context.Context, channel, threadTS, key string) (string, error) {
	cursor := ""
	for range postedPages {
		var msgs []slack.Message
		var next string
		var err error
		if threadTS != "" {
			msgs, _, next, err = c.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: channel, Timestamp: threadTS, Cursor: cursor, Limit: 200, IncludeAllMetadata: true})
		} else {
			var res *slack.GetConversationHistoryResponse
			res, err = c.api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{
				ChannelID: channel, Cursor: cursor, Limit: 200, IncludeAllMetadata: true})
			if res != nil {
				msgs, next = res.Messages, res.ResponseMetaData.NextCursor
			}
		}
		if err != nil {
			return "", classify("conversations.replies", err)
		}
		for _, m := range msgs {
			if m.Metadata.EventType == sendEvent && m.Metadata.EventPayload["key"] == key {
				return m.Timestamp, nil
			}
		}
		if next == "" || threadTS == "" {
			return "", nil
		}
		cursor = next
	}
	return "", nil
}

// PostEphemeral shows msg to user alone in the thread (chat.postEphemeral); its buttons are
// left out.
func (c *Client) PostEphemeral(ctx context.Context, channel, threadTS, user string, msg domain.OutMessage) error {
	opts := []slack.MsgOption{slack.MsgOptionText(nonEmpty(msg.Text), false)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	if _, err := c.api.PostEphemeralContext(ctx, channel, user, opts...); err != nil {
		return classify("chat.postEphemeral", err)
	}
	return nil
}

// CloseButtons replaces a message's buttons with a note of the decision.
func (c *Client) CloseButtons(ctx context.Context, channel, ts, text, note string) error {
	blocks := []slack.Block{
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, nonEmpty(text), false, false), nil, nil),
		slack.NewContextBlock("decision", slack.NewTextBlockObject(slack.MarkdownType, note, false, false)),
	}
	_, _, _, err := c.api.UpdateMessageContext(ctx, channel, ts,
		slack.MsgOptionText(nonEmpty(text), false), slack.MsgOptionBlocks(blocks...))
	if err != nil {
		return classify("chat.update", err)
	}
	return nil
}

func (c *Client) blocks(msg domain.OutMessage) []slack.Block {
	return []slack.Block{
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, nonEmpty(msg.Text), false, false), nil, nil),
		decisionBlock(msg.Buttons, c.texts),
	}
}

// Upload shares a picture in the thread with Slack's upload flow: files.getUploadURLExternal,
// the bytes to the URL it gives, then files.completeUploadExternal into the channel and thread.
func (c *Client) Upload(ctx context.Context, channel, threadTS string, img chatlink.Image, caption string) error {
	name := "screenshot.png"
	if img.ContentType == "image/jpeg" {
		name = "screenshot.jpg"
	}
	_, err := c.api.UploadFileContext(ctx, slack.UploadFileParameters{
		Reader: bytes.NewReader(img.Data), FileSize: len(img.Data), Filename: name, Title: name,
		AltTxt: img.Caption, InitialComment: caption, Channel: channel, ThreadTimestamp: threadTS,
	})
	if err != nil {
		return classify("files.upload", err)
	}
	return nil
}

func decisionBlock(actions []domain.Action, texts domain.Texts) *slack.ActionBlock {
	var buttons []slack.BlockElement
	for _, a := range actions {
		label := a.Label
		if label == "" {
			label = texts.Label(a.Kind)
		}
		b := slack.NewButtonBlockElement(string(a.Kind), domain.ButtonValue(a),
			slack.NewTextBlockObject(slack.PlainTextType, label, false, false))
		switch a.Kind {
		case chatlink.ActionApprove:
			b.Style = slack.StylePrimary
		case chatlink.ActionDeny:
			b.Style = slack.StyleDanger
		}
		buttons = append(buttons, b)
	}
	return slack.NewActionBlock("decision", buttons...)
}

func nonEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return " "
	}
	return s
}

// classify marks errors that retrying cannot fix (Slack answered ok=false with a client error
// such as channel_not_found or not_in_channel, or an HTTP 4xx other than 408 and 429) as
// domain.ErrPermanent; rate limits, 5xx and network errors stay retryable.
func classify(method string, err error) error {
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	switch {
	case errors.As(err, &rl):
		return fmt.Errorf("slack %s: %w", method, err)
	case errors.As(err, &sc):
		if sc.Code >= 400 && sc.Code < 500 && sc.Code != http.StatusTooManyRequests && sc.Code != http.StatusRequestTimeout {
			return fmt.Errorf("slack %s: %w: %w", method, domain.ErrPermanent, err)
		}
		return fmt.Errorf("slack %s: %w", method, err)
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout":
			return fmt.Errorf("slack %s: %w", method, err)
		}
		return fmt.Errorf("slack %s: %w: %w", method, domain.ErrPermanent, err)
	}
	return fmt.Errorf("slack %s: %w", method, err)
}

// Files downloads url_private_download links with the bot token, only from the configured
// files host (https://files.slack.com): a link to anywhere else is refused, and no redirect is
// followed (Slack redirects a request it does not accept to its sign-in page).
type Files struct {
	base  *url.URL
	token string
	hc    *http.Client
}

// NewFiles returns the downloader for files under baseURL (opts: outbound.Traced for spans).
func NewFiles(baseURL, token string, opts ...outbound.Option) (*Files, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("slackapi: files base url %q must be an http(s) URL", baseURL)
	}
	hc := outbound.Client(60*time.Second, opts...)
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Files{base: u, token: token, hc: hc}, nil
}

// Download fetches rawURL (channel.ReadImage checks size and type).
func (f *Files) Download(ctx context.Context, rawURL string, maxBytes int64) (chatlink.InboundImage, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != f.base.Scheme || !strings.EqualFold(u.Host, f.base.Host) || u.User != nil {
		return chatlink.InboundImage{}, fmt.Errorf("%w: file url is not on %s", channel.ErrImageSource, f.base.Host)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return chatlink.InboundImage{}, err
	}
	req.Header.Set("Authorization", "Bearer "+f.token)
	res, err := f.hc.Do(req)
	if err != nil {
		return chatlink.InboundImage{}, fmt.Errorf("slack file download: %w", err)
	}
	img, err := channel.ReadImage(res, maxBytes)
	if err != nil {
		return chatlink.InboundImage{}, fmt.Errorf("slack file download: %w", err)
	}
	return img, nil
}
