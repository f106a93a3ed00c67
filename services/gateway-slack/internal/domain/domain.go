// Package domain holds the Slack gateway's rules: what an inbound event is, which session and
// ordering key it belongs to, and how replies become thread messages and buttons (who may talk
// is the channel runtime's allowlist, pkg/channel).
package domain

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
)

// Sentinel errors.
var (
	// ErrInvalid marks input that can never be processed.
	ErrInvalid = chatlink.ErrInvalid
	// ErrPermanent marks a failure that retrying will not fix.
	ErrPermanent = chatlink.ErrPermanent
)

// Kind is what an inbound event is.
type Kind string

// Handled kinds.
const (
	KindMessage Kind = "message" // app_mention or a direct message
	KindAction  Kind = "action"  // a block_actions button press
	// KindImage is a message sharing an image file (File); Text is its caption.
	KindImage Kind = "image"
	// KindUnsupported is a message sharing a file that is not an image; Text names its type.
	KindUnsupported Kind = "unsupported"
)

// File is a shared file as the event names it; the bytes are downloaded when it is processed.
type File struct {
	ID       string `json:"id"`
	Name     string `json:"name,omitempty"`
	Mimetype string `json:"mimetype,omitempty"`
	Size     int64  `json:"size,omitempty"`
	// URL is url_private_download, fetched with the bot token only from the files host.
	URL string `json:"url"`
}

// ActionKind is what a button does (also the Slack action_id).
type ActionKind = chatlink.ActionKind

// Action is a button offered with a reply, or a button press.
type Action = chatlink.Action

// ButtonValue is the Slack button value: the job id, for picks "|" and the choice, and then
// "|" and the traceparent when there is one.
func ButtonValue(a Action) string {
	v := a.JobID
	if a.Value != "" {
		v += "|" + a.Value
	}
	if a.Trace != "" {
		v += "|" + a.Trace
	}
	return v
}

var traceparent = regexp.MustCompile(`^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$`)

// ParseButton reads a pressed button (action_id and value).
func ParseButton(actionID, value string) (Action, error) {
	k := ActionKind(actionID)
	switch k {
	case chatlink.ActionApprove, chatlink.ActionDeny, chatlink.ActionPick, chatlink.ActionApproveSimilar:
	default:
		return Action{}, fmt.Errorf("%w: action %q", ErrInvalid, actionID)
	}
	var tp string
	if i := strings.LastIndex(value, "|"); i >= 0 && traceparent.MatchString(value[i+1:]) {
		value, tp = value[:i], value[i+1:]
	}
	job, v, _ := strings.Cut(value, "|")
	if job == "" {
		return Action{}, fmt.Errorf("%w: button without job id", ErrInvalid)
	}
	return Action{Kind: k, JobID: job, Value: v, Trace: tp}, nil
}

// Command is the typed form of an action.
func Command(a Action) string { return chatlink.Command(a) }

// Reply is one message from chat-mio.
type Reply = chatlink.Reply

// Inbound is one Slack event as the gateway stores and processes it.
type Inbound struct {
	EventID string `json:"event_id"`
	Kind    Kind   `json:"kind"`
	TeamID  string `json:"team_id,omitempty"`
	Channel string `json:"channel"`
	// ThreadTS is the thread the conversation lives in (the message's own ts for a new thread).
	ThreadTS string  `json:"thread_ts"`
	UserID   string  `json:"user_id"`
	Text     string  `json:"text,omitempty"`
	Action   *Action `json:"action,omitempty"`
	// MessageTS is the message carrying the pressed buttons (actions only).
	MessageTS string `json:"message_ts,omitempty"`
	// MessageText is that message's text, kept when its buttons are removed.
	MessageText string `json:"message_text,omitempty"`
	IsDM        bool   `json:"is_dm,omitempty"`
	// File is the shared file of a KindImage event.
	File *File `json:"file,omitempty"`
}

// SessionID is the chat-mio session (SPEC §10: slack:<channel>:<thread_ts>).
func (in Inbound) SessionID() string { return "slack:" + in.Channel + ":" + in.ThreadTS }

// Key orders processing: one thread's events run one after another.
func (in Inbound) Key() string { return in.Channel + ":" + in.ThreadTS }

// Encode is the stored form.
func (in Inbound) Encode() ([]byte, error) { return json.Marshal(in) }

// DecodeInbound reads a stored event.
func DecodeInbound(b []byte) (Inbound, error) {
	var in Inbound
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("%w: stored event: %w", ErrInvalid, err)
	}
	if in.EventID == "" || in.Channel == "" || in.ThreadTS == "" || in.Kind == "" {
		return in, fmt.Errorf("%w: stored event lacks id, channel, thread or kind", ErrInvalid)
	}
	if in.Kind == KindAction && in.Action == nil {
		return in, fmt.Errorf("%w: action event without action", ErrInvalid)
	}
	return in, nil
}

// ParseSession splits slack:<channel>:<thread_ts>.
func ParseSession(id string) (channel, threadTS string, err error) {
	rest, ok := strings.CutPrefix(id, "slack:")
	if !ok {
		return "", "", fmt.Errorf("%w: session %q is not a Slack session", ErrInvalid, id)
	}
	channel, threadTS, _ = strings.Cut(rest, ":")
	if channel == "" {
		return "", "", fmt.Errorf("%w: session %q has no channel", ErrInvalid, id)
	}
	return channel, threadTS, nil
}

// StripMention removes the leading mention of the bot from an app_mention text.
func StripMention(text, botUserID string) string {
	t := strings.TrimSpace(text)
	if botUserID != "" {
		t = strings.TrimSpace(strings.TrimPrefix(t, "<@"+botUserID+">"))
	} else if strings.HasPrefix(t, "<@") {
		if i := strings.IndexByte(t, '>'); i > 0 {
			t = strings.TrimSpace(t[i+1:])
		}
	}
	return t
}
