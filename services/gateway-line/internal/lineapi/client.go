// Package lineapi sends replies, pushes and loading animations through the LINE Messaging API
// (line-bot-sdk-go), with retries that keep the same X-Line-Retry-Key.
package lineapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/line/line-bot-sdk-go/v8/linebot/messaging_api"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/outbound"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
)

// Config configures the client.
type Config struct {
	// BaseURL is the Messaging API endpoint (https://api.line.me, a local server in tests).
	BaseURL string
	// DataBaseURL is the blob endpoint message contents are downloaded from
	// (https://api-data.line.me).
	DataBaseURL string
	Token       string
	// HTTPClient defaults to a client with a 20 s timeout.
	HTTPClient *http.Client
	// PushAttempts bounds the attempts of one push on 5xx, 429 and network errors (default 3).
	PushAttempts int
	// Backoff is the first retry delay, doubled per attempt (default 300 ms).
	Backoff time.Duration
}

// Client is a Messaging API client. It is safe for concurrent use.
type Client struct {
	cfg Config
}

// New returns a client.
func New(cfg Config) (*Client, error) {
	if cfg.Token == "" {
		return nil, errors.New("lineapi: channel access token is required")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://api.line.me"
	}
	if cfg.DataBaseURL == "" {
		cfg.DataBaseURL = "https://api-data.line.me"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = outbound.Client(20 * time.Second)
	}
	if cfg.PushAttempts <= 0 {
		cfg.PushAttempts = 3
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 300 * time.Millisecond
	}
	if _, err := messaging_api.NewMessagingApiAPI(cfg.Token, messaging_api.WithEndpoint(cfg.BaseURL)); err != nil {
		return nil, fmt.Errorf("lineapi: base url %q: %w", cfg.BaseURL, err)
	}
	return &Client{cfg: cfg}, nil
}

// api builds a per-call SDK client: the SDK keeps the request context on the client value, so
// sharing one between goroutines would mix their contexts.
func (c *Client) api(ctx context.Context) (*messaging_api.MessagingApiAPI, error) {
	api, err := messaging_api.NewMessagingApiAPI(c.cfg.Token,
		messaging_api.WithHTTPClient(c.cfg.HTTPClient), messaging_api.WithEndpoint(c.cfg.BaseURL))
	if err != nil {
		return nil, err
	}
	return api.WithContext(ctx), nil
}

// Reply answers with a reply token. A 400 (token expired or used) is domain.ErrReplyToken.
func (c *Client) Reply(ctx context.Context, replyToken string, msgs []domain.OutMessage) error {
	api, err := c.api(ctx)
	if err != nil {
		return err
	}
	res, _, err := api.ReplyMessageWithHttpInfo(&messaging_api.ReplyMessageRequest{
		ReplyToken: replyToken, Messages: toSDK(msgs),
	})
	if err == nil {
		return nil
	}
	if res != nil && res.StatusCode == http.StatusBadRequest {
		return fmt.Errorf("line reply: %w: %w", domain.ErrReplyToken, err)
	}
	return fmt.Errorf("line reply: %w", err)
}

// Push sends messages to a user, group or room. Every attempt carries the same retry key, so LINE
// delivers the push at most once; a 409 means an earlier attempt was accepted and counts as
// success. 5xx, 408, 429 and network errors are retried (here a few times, then by the outbox
// until its maximum age); other 4xx are domain.ErrPermanent.
func (c *Client) Push(ctx context.Context, to string, msgs []domain.OutMessage, retryKey string) error {
	req := &messaging_api.PushMessageRequest{To: to, Messages: toSDK(msgs)}
	var last error
	for attempt := 1; attempt <= c.cfg.PushAttempts; attempt++ {
		api, err := c.api(ctx)
		if err != nil {
			return err
		}
		res, _, err := api.PushMessageWithHttpInfo(req, retryKey)
		if err == nil {
			return nil
		}
		status := 0
		if res != nil {
			status = res.StatusCode
		}
		switch {
		case status == http.StatusConflict:
			return nil
		case status >= 400 && status < 500 && status != http.StatusTooManyRequests && status != http.StatusRequestTimeout:
			return fmt.Errorf("line push: %w: %w", domain.ErrPermanent, err)
		}
		last = err
		if attempt == c.cfg.PushAttempts {
			break
		}
		wait := c.cfg.Backoff << (attempt - 1)
		if res != nil {
			if s, perr := strconv.Atoi(res.Header.Get("Retry-After")); perr == nil && s > 0 {
				wait = time.Duration(s) * time.Second
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return fmt.Errorf("line push after %d attempts: %w", c.cfg.PushAttempts, last)
}

// ShowLoading starts the loading animation in a 1:1 chat for seconds (5..60, a multiple of 5).
func (c *Client) ShowLoading(ctx context.Context, chatID string, seconds int) error {
	api, err := c.api(ctx)
	if err != nil {
		return err
	}
	seconds = min(max(seconds-seconds%5, 5), 60)
	if _, _, err := api.ShowLoadingAnimationWithHttpInfo(&messaging_api.ShowLoadingAnimationRequest{
		ChatId: chatID, LoadingSeconds: int32(seconds),
	}); err != nil {
		return fmt.Errorf("line loading animation: %w", err)
	}
	return nil
}

func toSDK(msgs []domain.OutMessage) []messaging_api.MessageInterface {
	out := make([]messaging_api.MessageInterface, 0, len(msgs))
	for _, m := range msgs {
		var qr *messaging_api.QuickReply
		if len(m.QuickReplies) > 0 {
			items := make([]messaging_api.QuickReplyItem, len(m.QuickReplies))
			for i, b := range m.QuickReplies {
				items[i] = messaging_api.QuickReplyItem{Type: "action", Action: postback(b)}
			}
			qr = &messaging_api.QuickReply{Items: items}
		}
		if m.Flex != nil {
			out = append(out, &messaging_api.FlexMessage{AltText: m.Flex.AltText, Contents: FlexBubble(m.Flex), QuickReply: qr})
			continue
		}
		if m.Image != nil {
			out = append(out, &messaging_api.ImageMessage{OriginalContentUrl: m.Image.Original, PreviewImageUrl: m.Image.Preview, QuickReply: qr})
			continue
		}
		if m.Confirm != nil {
			out = append(out, &messaging_api.TemplateMessage{
				AltText: m.Confirm.AltText,
				Template: &messaging_api.ConfirmTemplate{
					Text:    m.Confirm.Text,
					Actions: []messaging_api.ActionInterface{postback(m.Confirm.Yes), postback(m.Confirm.No)},
				},
				QuickReply: qr,
			})
			continue
		}
		out = append(out, &messaging_api.TextMessage{Text: m.Text, QuickReply: qr})
	}
	return out
}

func postback(b domain.Button) *messaging_api.PostbackAction {
	return &messaging_api.PostbackAction{Label: b.Label, Data: b.Data, DisplayText: b.DisplayText}
}

// Content downloads a message's content (GET /v2/bot/message/{messageId}/content on the blob
// endpoint) within maxBytes, checked to be an image (channel.ReadImage). 404 — no content, or
// past LINE's retention — is permanent.
func (c *Client) Content(ctx context.Context, messageID string, maxBytes int64) (chatlink.InboundImage, error) {
	u := strings.TrimRight(c.cfg.DataBaseURL, "/") + "/v2/bot/message/" + url.PathEscape(messageID) + "/content"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return chatlink.InboundImage{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	// The content is served at this address itself: a redirect is not followed (it could lead the
	// download, and the time it takes, anywhere).
	hc := *c.cfg.HTTPClient
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := hc.Do(req)
	if err != nil {
		return chatlink.InboundImage{}, fmt.Errorf("line content: %w", err)
	}
	img, err := channel.ReadImage(res, maxBytes)
	if err != nil {
		return chatlink.InboundImage{}, fmt.Errorf("line content %s: %w", messageID, err)
	}
	return img, nil
}
