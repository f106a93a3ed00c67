// Package app is the Slack channel of the channel runtime (pkg/channel): it reads stored Slack
// events, answers in their thread (each message posted once, Slack has no idempotency key) and
// closes the buttons of a decided approval.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/domain"
)

// Slack is the Web API.
type Slack interface {
	// Post posts msg with its send key (kept in the message's metadata).
	Post(ctx context.Context, channel, threadTS string, msg domain.OutMessage, key string) (string, error)
	// Posted finds the message posted under key in the thread; "" when there is none.
	Posted(ctx context.Context, channel, threadTS, key string) (string, error)
	// PostEphemeral shows msg to user alone (its buttons are left out).
	PostEphemeral(ctx context.Context, channel, threadTS, user string, msg domain.OutMessage) error
	CloseButtons(ctx context.Context, channel, ts, text, note string) error
	// Upload shares a picture in the thread with a caption.
	Upload(ctx context.Context, channel, threadTS string, img chatlink.Image, caption string) error
}

// Files downloads shared files from Slack's file host.
type Files interface {
	Download(ctx context.Context, rawURL string, maxBytes int64) (chatlink.InboundImage, error)
}

// address is where a Slack send goes.
type address struct{ channel, thread string }

// Channel is Slack for the channel runtime.
type Channel struct {
	texts domain.Texts
	slack Slack
	files Files
	once  *channel.Once
	log   *slog.Logger
}

var (
	_ channel.Channel      = (*Channel)(nil)
	_ channel.Finisher     = (*Channel)(nil)
	_ channel.ImageFetcher = (*Channel)(nil)
)

// WithFiles lets the channel download shared images; without it they are answered as
// unsupported.
func (c *Channel) WithFiles(f Files) *Channel {
	c.files = f
	return c
}

// FetchImage downloads a shared image with the bot token. A file whose declared size is over
// the cap is refused before any download.
func (c *Channel) FetchImage(ctx context.Context, ev channel.Event, maxBytes int64) (chatlink.InboundImage, error) {
	in := ev.Native.(domain.Inbound)
	if in.File == nil || c.files == nil {
		return chatlink.InboundImage{}, fmt.Errorf("%w: no file to download", channel.ErrImageSource)
	}
	if in.File.Size > maxBytes {
		return chatlink.InboundImage{}, fmt.Errorf("%w: %d bytes declared", channel.ErrImageTooLarge, in.File.Size)
	}
	img, err := c.files.Download(ctx, in.File.URL, maxBytes)
	if err != nil {
		return chatlink.InboundImage{}, err
	}
	img.Source = "slack:" + in.File.ID
	return img, nil
}

// New wires the Slack channel; once remembers the messages that went out.
func New(locale string, slack Slack, once *channel.Once, log *slog.Logger) *Channel {
	return &Channel{texts: domain.TextsFor(locale), slack: slack, once: once, log: log}
}

// Name is the channel name.
func (c *Channel) Name() string { return "slack" }

// Decode reads a stored Slack event.
func (c *Channel) Decode(payload []byte) (channel.Event, error) {
	in, err := domain.DecodeInbound(payload)
	if err != nil {
		return channel.Event{}, err
	}
	ev := channel.Event{ID: in.EventID, Kind: channel.KindMessage, SessionID: in.SessionID(), UserID: in.UserID, Text: in.Text,
		Action: in.Action, IsGroup: !in.IsDM, ReceivedAt: time.Now(), Native: in}
	switch in.Kind {
	case domain.KindAction:
		ev.Kind = channel.KindAction
	case domain.KindImage:
		ev.Kind = channel.KindImage
	case domain.KindUnsupported:
		ev.Kind = channel.KindUnsupported
	}
	return ev, nil
}

// Target parses slack:<channel>:<thread_ts>.
func (c *Channel) Target(sessionID string) (channel.Target, error) {
	ch, thread, err := domain.ParseSession(sessionID)
	if err != nil {
		return channel.Target{}, err
	}
	return channel.Target{Native: address{ch, thread}}, nil
}

// AfterChat removes the buttons of a decided approval, so nobody presses them again. A message
// that is gone (a permanent refusal) does not hold the answer back.
func (c *Channel) AfterChat(ctx context.Context, ev channel.Event) error {
	in := ev.Native.(domain.Inbound)
	if in.MessageTS == "" || in.Action == nil {
		return nil
	}
	err := c.once.Do(ctx, "close:"+in.EventID, func() error {
		return c.slack.CloseButtons(ctx, in.Channel, in.MessageTS, in.MessageText, c.texts.DecidedNote(in.UserID, *in.Action))
	})
	if err != nil {
		if !errors.Is(err, domain.ErrPermanent) {
			return err
		}
		c.log.WarnContext(ctx, "slack.close_buttons_failed", slog.String("event_id", in.EventID), slog.Any("error", err))
	}
	return nil
}

// SendPrivate answers the presser of a refused button alone (ephemeral messages in the
// thread), leaving the conversation and its buttons as they were.
func (c *Channel) SendPrivate(ctx context.Context, ev channel.Event, key string, replies []chatlink.Reply) (int, error) {
	in := ev.Native.(domain.Inbound)
	msgs := domain.Compose(replies, c.texts)
	for i, m := range msgs {
		if m.Image != nil {
			// An ephemeral message cannot carry a file; private answers have no pictures.
			continue
		}
		err := c.once.Do(ctx, key+":private:"+strconv.Itoa(i), func() error {
			return c.slack.PostEphemeral(ctx, in.Channel, in.ThreadTS, in.UserID, m)
		})
		if err != nil {
			return i, err
		}
	}
	return len(msgs), nil
}

// Send posts the replies in the thread in order; each message is marked once sent, so a retry
// resumes after it. Slack has no idempotency key, so every message carries its send key in its
// metadata, and a retry (a later attempt, or a redelivery after a crash) first looks for the
// message in the thread: one whose post was made but whose answer was lost is found there and
// not posted again.
func (c *Channel) Send(ctx context.Context, to channel.Target, key string, replies []chatlink.Reply) (int, error) {
	retry := to.Attempt > 1 || to.Redelivered
	var a address
	if to.Event != nil {
		in := to.Event.Native.(domain.Inbound)
		a = address{in.Channel, in.ThreadTS}
	} else {
		a, _ = to.Native.(address)
	}
	msgs := domain.Compose(replies, c.texts)
	for i, m := range msgs {
		k := key + ":" + strconv.Itoa(i)
		err := c.once.Do(ctx, k, func() error {
			if m.Image != nil {
				// An upload carries no metadata to find it by; the mark kept once it is
				// shared is what keeps a retry from sharing it again.
				return c.slack.Upload(ctx, a.channel, a.thread, *m.Image, m.Text)
			}
			if retry {
				ts, err := c.slack.Posted(ctx, a.channel, a.thread, k)
				if err != nil {
					return err
				}
				if ts != "" {
					c.log.InfoContext(ctx, "slack.found_posted", slog.String("key", k), slog.String("ts", ts))
					return nil
				}
			}
			_, err := c.slack.Post(ctx, a.channel, a.thread, m, k)
			return err
		})
		if err != nil {
			return i, err
		}
	}
	return len(msgs), nil
}
