// Package domain holds the LINE gateway's rules: what an inbound event is, when the reply token
// may be used, how replies are cut into LINE messages and how approval buttons are encoded.
package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
)

// Sentinel errors.
var (
	// ErrInvalid marks input that can never be processed (a stored event that does not decode).
	ErrInvalid = chatlink.ErrInvalid
	// ErrReplyToken means LINE refused the reply token (expired or already used).
	ErrReplyToken = errors.New("reply token rejected")
	// ErrPermanent marks a failure that retrying will not fix.
	ErrPermanent = chatlink.ErrPermanent
)

// Kind is what an inbound event is about.
type Kind string

// Handled event kinds; every other LINE event is logged and ignored at the webhook.
const (
	KindText     Kind = "text"
	KindPostback Kind = "postback"
	KindFollow   Kind = "follow"
	KindUnfollow Kind = "unfollow"
	// KindImage is an image message: MessageID names its content, ContentProvider where it is.
	KindImage Kind = "image"
	// KindUnsupported is a message the assistant cannot read (sticker, audio, video, file,
	// location); Text names its type.
	KindUnsupported Kind = "unsupported"
)

// SourceType is where the event came from.
type SourceType string

// LINE source types.
const (
	SourceUser  SourceType = "user"
	SourceGroup SourceType = "group"
	SourceRoom  SourceType = "room"
)

// Inbound is one LINE event as the gateway stores and processes it.
type Inbound struct {
	EventID    string     `json:"event_id"`
	Kind       Kind       `json:"kind"`
	SourceType SourceType `json:"source_type"`
	// UserID is the sender (may be empty in groups when the user has not consented).
	UserID string `json:"user_id,omitempty"`
	// ChatID is where answers go: the user id for 1:1 chats, else the group or room id.
	ChatID       string    `json:"chat_id"`
	Text         string    `json:"text,omitempty"`
	PostbackData string    `json:"postback_data,omitempty"`
	ReplyToken   string    `json:"reply_token,omitempty"`
	Timestamp    time.Time `json:"timestamp"`
	// Redelivery is LINE's deliveryContext.isRedelivery.
	Redelivery bool `json:"redelivery,omitempty"`
	// Mentioned: the text message mentions the bot (isSelf).
	Mentioned bool `json:"mentioned,omitempty"`
	// MessageID and ContentProvider (line or external) locate an image message's content.
	MessageID       string `json:"message_id,omitempty"`
	ContentProvider string `json:"content_provider,omitempty"`
}

// ContentExternal is the content provider of an image hosted outside LINE.
const ContentExternal = "external"

// SessionID is the chat-mio session of the event (SPEC §10: line:<userId>, groups line:<groupId>).
func (in Inbound) SessionID() string { return "line:" + in.ChatID }

// IsGroup reports whether the event came from a group or room.
func (in Inbound) IsGroup() bool { return in.SourceType != SourceUser }

// Encode is the stored form.
func (in Inbound) Encode() ([]byte, error) { return json.Marshal(in) }

// DecodeInbound reads a stored event.
func DecodeInbound(b []byte) (Inbound, error) {
	var in Inbound
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("%w: stored event: %w", ErrInvalid, err)
	}
	if in.EventID == "" || in.ChatID == "" || in.Kind == "" {
		return in, fmt.Errorf("%w: stored event lacks id, chat or kind", ErrInvalid)
	}
	return in, nil
}

// UseReplyToken decides whether the answer may use the reply token: only on the first attempt of
// a first delivery, and only while the event is younger than margin (the token lives one minute
// from the event; margin leaves room for the request itself).
func UseReplyToken(in Inbound, redelivered bool, attempt int, now time.Time, margin time.Duration) bool {
	if in.ReplyToken == "" || in.Redelivery || redelivered || attempt > 1 {
		return false
	}
	return now.Sub(in.Timestamp) < margin
}
