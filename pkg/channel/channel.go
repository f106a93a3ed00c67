// Package channel is the runtime every chat channel (LINE, Slack, the terminal) runs on: it owns
// the durable inbox and its consumer, the allowlist, the call to chat-mio, the retry and dedupe
// keys of every send, the notification API other services push through and the service wiring.
// A channel supplies only what is its own (the Channel interface): reading its stored events,
// parsing its session ids and rendering and sending replies with its API client.
package channel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
)

// Sentinel errors every channel uses.
var (
	// ErrInvalid marks input that can never be processed.
	ErrInvalid = chatlink.ErrInvalid
	// ErrPermanent marks a failure that retrying will not fix.
	ErrPermanent = chatlink.ErrPermanent
	// ErrUnknownSession marks a notification for a session this channel instance does not serve.
	ErrUnknownSession = errors.New("unknown session")
)

// Kind is what an inbound event is about.
type Kind string

// Event kinds, the same on every channel.
const (
	KindMessage  Kind = "message"  // the user wrote something
	KindAction   Kind = "action"   // the user pressed a button
	KindFollow   Kind = "follow"   // the user added the assistant (gets the welcome text)
	KindUnfollow Kind = "unfollow" // the user left (logged, nothing sent)
	// KindUnsupported: a message the assistant cannot read (sticker, audio, …); the user is
	// told what is supported.
	KindUnsupported Kind = "unsupported"
	// KindImage: the user sent a picture (Text, when set, is its caption); the channel fetches
	// it (ImageFetcher) and chat-mio gives it to the vision model.
	KindImage Kind = "image"
)

// Event is one inbound event in its channel-neutral form.
type Event struct {
	ID        string
	Kind      Kind
	SessionID string
	UserID    string
	Text      string
	// Action is the pressed button (KindAction).
	Action *chatlink.Action
	// Ignore, when set, says why the event is logged and dropped after the allowlist check (a
	// button press whose data does not decode).
	Ignore     error
	IsGroup    bool
	ReceivedAt time.Time
	// Native is the channel's own form of the event (reply token, thread, message ids).
	Native any
}

// Target is where a send goes: the answer to an event, or a notification for a session.
type Target struct {
	SessionID string
	// Event is the event being answered; nil for a notification.
	Event *Event
	// InReply is true while the event itself is answered (a channel may use a reply token then),
	// false for the failure notice sent when the inbox gives up.
	InReply bool
	// Redelivered and Attempt describe the inbox delivery of Event.
	Redelivered bool
	Attempt     int
	// Native is the channel's parsed address of a notification's session.
	Native any
}

// Channel is what a chat channel supplies to the runtime.
type Channel interface {
	// Name is the channel's name: the prefix of its session ids, log events and span names.
	Name() string
	// Decode reads a stored event (errors wrap ErrInvalid).
	Decode(payload []byte) (Event, error)
	// Target parses a session id for a notification (ErrInvalid or ErrUnknownSession).
	Target(sessionID string) (Target, error)
	// Send renders replies and delivers them in order, returning how many messages went out.
	// key names this send: a send retried with the same key must not deliver twice (a retry key
	// at the API, sent marks). Failures that retrying cannot fix wrap ErrPermanent.
	Send(ctx context.Context, to Target, key string, replies []chatlink.Reply) (int, error)
}

// Preparer is implemented by channels that do something while chat-mio works on an event
// (LINE's loading animation). BeforeChat is called before chat-mio is; the runtime calls the
// function it returns once chat-mio has answered (or failed), before anything is sent, and the
// function returns when what BeforeChat started is over, so it cannot reach the user after the
// answer (nil: nothing to wait for). It is best effort: errors are the channel's to log.
type Preparer interface {
	BeforeChat(ctx context.Context, ev Event) (done func())
}

// Finisher is implemented by channels that act on the pressed button once chat-mio took the
// decision (Slack closes the buttons). An error is retried with the event.
type Finisher interface {
	AfterChat(ctx context.Context, ev Event) error
}

// Whisperer is implemented by channels that can answer one user privately in a shared
// conversation (Slack's ephemeral messages): a refused button press is explained to the presser
// alone. Like Send, each message is marked once sent under key.
type Whisperer interface {
	SendPrivate(ctx context.Context, ev Event, key string, replies []chatlink.Reply) (int, error)
}

// Allowlist holds the user ids that may use the assistant; empty means nobody.
type Allowlist map[string]struct{}

// NewAllowlist builds an allowlist from ids (blank entries ignored).
func NewAllowlist(ids []string) Allowlist {
	a := Allowlist{}
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			a[id] = struct{}{}
		}
	}
	return a
}

// Allowed reports whether user may talk to the assistant.
func (a Allowlist) Allowed(user string) bool {
	_, ok := a[user]
	return ok && user != ""
}

// ContentKey is a stable name for a notification without a caller-supplied key: the same
// session, job and texts give the same key.
func ContentKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return "content:" + hex.EncodeToString(h.Sum(nil))
}

// Notice is a plain text reply (refusal, welcome, failure notice).
func Notice(text string) []chatlink.Reply { return []chatlink.Reply{{Text: text}} }
