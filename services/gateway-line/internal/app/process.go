// Package app is the LINE channel of the channel runtime (pkg/channel): it reads stored LINE
// events, shows the loading animation and answers with the reply token while it is valid,
// otherwise with a push under a retry key derived from the event.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
)

// Messenger is the LINE Messaging API.
type Messenger interface {
	Reply(ctx context.Context, replyToken string, msgs []domain.OutMessage) error
	Push(ctx context.Context, to string, msgs []domain.OutMessage, retryKey string) error
	ShowLoading(ctx context.Context, chatID string, seconds int) error
}

// Contents downloads a message's content from the Messaging API's blob endpoint.
type Contents interface {
	Content(ctx context.Context, messageID string, maxBytes int64) (chatlink.InboundImage, error)
}

// Config tunes the channel.
type Config struct {
	// Contents fetches images; without it an image is answered as unsupported.
	Contents Contents
	// ReplyTokenMargin: the reply token is used only while the event is younger than this.
	ReplyTokenMargin time.Duration
	// LoadingSeconds is how long the loading animation runs at most (LINE stops it at the reply).
	LoadingSeconds int
	// LoadingAfter is how long chat-mio works on an event before the animation starts (0: at
	// once).
	LoadingAfter time.Duration
	Locale       string
	// Images makes a picture reachable for LINE (nil: images are named by their artifact
	// reference in text instead).
	Images domain.Publisher
	// Now defaults to time.Now.
	Now func() time.Time
}

// Channel is LINE for the channel runtime.
type Channel struct {
	cfg   Config
	texts domain.Texts
	line  Messenger
	log   *slog.Logger
}

var (
	_ channel.Channel      = (*Channel)(nil)
	_ channel.Preparer     = (*Channel)(nil)
	_ channel.ImageFetcher = (*Channel)(nil)
)

// FetchImage downloads an image message's content from LINE. An image hosted outside LINE
// (contentProvider external) is never fetched: its URL is the sender's to choose, and fetching
// it would let anyone make the gateway call any address.
func (c *Channel) FetchImage(ctx context.Context, ev channel.Event, maxBytes int64) (chatlink.InboundImage, error) {
	in := ev.Native.(domain.Inbound)
	if in.ContentProvider == domain.ContentExternal {
		return chatlink.InboundImage{}, fmt.Errorf("%w: contentProvider external", channel.ErrImageSource)
	}
	if c.cfg.Contents == nil || in.MessageID == "" {
		return chatlink.InboundImage{}, fmt.Errorf("%w: no content to fetch", channel.ErrImageSource)
	}
	img, err := c.cfg.Contents.Content(ctx, in.MessageID, maxBytes)
	if err != nil {
		return chatlink.InboundImage{}, err
	}
	img.Source = "line:" + in.MessageID
	return img, nil
}

// New wires the LINE channel.
func New(cfg Config, line Messenger, log *slog.Logger) *Channel {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Channel{cfg: cfg, texts: domain.TextsFor(cfg.Locale), line: line, log: log}
}

// Name is the channel name.
func (c *Channel) Name() string { return "line" }

// Decode reads a stored LINE event.
func (c *Channel) Decode(payload []byte) (channel.Event, error) {
	in, err := domain.DecodeInbound(payload)
	if err != nil {
		return channel.Event{}, err
	}
	ev := channel.Event{ID: in.EventID, SessionID: in.SessionID(), UserID: in.UserID, Text: in.Text,
		IsGroup: in.IsGroup(), ReceivedAt: in.Timestamp, Native: in}
	switch in.Kind {
	case domain.KindFollow:
		ev.Kind = channel.KindFollow
	case domain.KindUnfollow:
		ev.Kind = channel.KindUnfollow
	case domain.KindUnsupported:
		ev.Kind = channel.KindUnsupported
	case domain.KindImage:
		ev.Kind = channel.KindImage
	case domain.KindPostback:
		ev.Kind = channel.KindAction
		if a, err := domain.DecodePostback(in.PostbackData); err != nil {
			ev.Ignore = err
		} else {
			ev.Action = &a
		}
	default:
		ev.Kind = channel.KindMessage
	}
	return ev, nil
}

// Target parses line:<chatId>.
func (c *Channel) Target(sessionID string) (channel.Target, error) {
	to, ok := strings.CutPrefix(sessionID, "line:")
	if !ok || to == "" {
		return channel.Target{}, fmt.Errorf("%w: session %q is not a LINE session", domain.ErrInvalid, sessionID)
	}
	return channel.Target{Native: to}, nil
}

// BeforeChat starts the loading animation in 1:1 chats once chat-mio has worked on the event
// for LoadingAfter without an answer: an answer that comes sooner (a command, a quick model)
// needs no animation, and would only see it flash. The returned function stops the timer, or
// waits for a request already under way, so the animation's request never reaches LINE after
// the answer (LINE ends the animation when a message arrives; one started after it would run
// its full LoadingSeconds on a finished conversation). Best effort: the answer matters, the
// animation does not.
func (c *Channel) BeforeChat(ctx context.Context, ev channel.Event) func() {
	in := ev.Native.(domain.Inbound)
	if in.IsGroup() {
		return nil
	}
	show := func() {
		// The answer may be waiting for this request: it gets loadingTimeout, not the
		// client's whole timeout.
		lctx, cancel := context.WithTimeout(ctx, loadingTimeout)
		defer cancel()
		if err := c.line.ShowLoading(lctx, in.ChatID, c.cfg.LoadingSeconds); err != nil {
			c.log.WarnContext(ctx, "line.loading_failed", slog.String("event_id", in.EventID), slog.Any("error", err))
		}
	}
	if c.cfg.LoadingAfter <= 0 {
		show()
		return nil
	}
	shown := make(chan struct{})
	t := time.AfterFunc(c.cfg.LoadingAfter, func() {
		defer close(shown)
		show()
	})
	// The runtime calls it once (channel.Preparer).
	return func() {
		if !t.Stop() {
			<-shown
		}
	}
}

// loadingTimeout bounds the loading animation's request, which an answer may be waiting for.
const loadingTimeout = 3 * time.Second

// Send answers an event with the reply token while it is valid, otherwise (or when LINE refuses
// the token) with a push whose retry key is derived from key, so every retry of this answer — in
// this process or after a restart — is delivered at most once.
func (c *Channel) Send(ctx context.Context, to channel.Target, key string, replies []chatlink.Reply) (int, error) {
	msgs := domain.Compose(replies, c.texts, c.cfg.Images)
	if len(msgs) == 0 {
		return 0, nil
	}
	var dest string
	if to.Event != nil {
		in := to.Event.Native.(domain.Inbound)
		dest = in.ChatID
		if to.InReply && domain.UseReplyToken(in, to.Redelivered, to.Attempt, c.cfg.Now(), c.cfg.ReplyTokenMargin) {
			err := c.line.Reply(ctx, in.ReplyToken, msgs)
			if err == nil {
				c.log.DebugContext(ctx, "line.replied", slog.String("event_id", in.EventID))
				return len(msgs), nil
			}
			c.log.WarnContext(ctx, "line.reply_failed", slog.String("event_id", in.EventID), slog.Any("error", err))
		}
	} else {
		dest, _ = to.Native.(string)
	}
	if dest == "" {
		return 0, fmt.Errorf("%w: no LINE chat to send to", domain.ErrInvalid)
	}
	rk := domain.RetryKey(key)
	if err := c.line.Push(ctx, dest, msgs, rk); err != nil {
		return 0, err
	}
	c.log.InfoContext(ctx, "line.pushed", slog.String("session_id", to.SessionID), slog.String("retry_key", rk))
	return len(msgs), nil
}
