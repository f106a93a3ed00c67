package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/line/line-bot-sdk-go/v8/linebot/webhook"
)

// parseRequest is webhook.ParseRequest (read the body, check X-Line-Signature, then parse) with
// one pass over the body for the events a chat is made of. The SDK's parser decodes a body five
// or six times (into maps of raw fields at every level, then into the event's type): about 7 %
// of gateway-line's CPU per message. A body whose every event is a text message from a user, a
// group or a room is decoded once into the same SDK types the SDK's parser would build (the text
// itself, mentions included, by the SDK's own TextMessageContent); any other body, or one that
// does not decode that way, goes to the SDK's parser, whose answer stands. (The SDK looks its
// fields up by their exact names, encoding/json case-insensitively: a body whose keys are cased
// otherwise than the definition's — which nobody without the channel secret can sign, and LINE
// never sends — may be read where the SDK would not read it.)
func parseRequest(secret string, r *http.Request) (*webhook.CallbackRequest, error) {
	defer func() { _ = r.Body.Close() }()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	if !webhook.ValidateSignature(secret, r.Header.Get("X-Line-Signature"), body) {
		return nil, webhook.ErrInvalidSignature
	}
	if cb, ok := parseTextEvents(body); ok {
		return cb, nil
	}
	var cb webhook.CallbackRequest
	if err := json.Unmarshal(body, &cb); err != nil {
		return nil, fmt.Errorf("failed to unmarshal request body: %w", err)
	}
	return &cb, nil
}

// textBody is a webhook body of text message events, as the Messaging API's webhook definition
// has them (https://developers.line.biz/en/reference/messaging-api/#message-event).
type textBody struct {
	Destination string      `json:"destination"`
	Events      []textEvent `json:"events"`
}

type textEvent struct {
	Type            string                      `json:"type"`
	Source          *textSource                 `json:"source"`
	Timestamp       int64                       `json:"timestamp"`
	Mode            webhook.EventMode           `json:"mode"`
	WebhookEventID  string                      `json:"webhookEventId"`
	DeliveryContext *webhook.DeliveryContext    `json:"deliveryContext"`
	ReplyToken      string                      `json:"replyToken"`
	Message         *webhook.TextMessageContent `json:"message"`
}

type textSource struct {
	Type    string `json:"type"`
	UserID  string `json:"userId"`
	GroupID string `json:"groupId"`
	RoomID  string `json:"roomId"`
}

var errNotText = errors.New("not a body of text messages")

// parseTextEvents decodes body in one pass when every event in it is a text message from a
// user, a group or a room; ok is false otherwise.
func parseTextEvents(body []byte) (cb *webhook.CallbackRequest, ok bool) {
	var b textBody
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, false
	}
	out := &webhook.CallbackRequest{Destination: b.Destination}
	for _, e := range b.Events {
		ev, err := e.event()
		if err != nil {
			return nil, false
		}
		out.Events = append(out.Events, ev)
	}
	return out, true
}

// event is e as the SDK's parser builds it: a MessageEvent holding the source and the text.
func (e textEvent) event() (webhook.EventInterface, error) {
	if e.Type != "message" || e.Source == nil || e.Message == nil || e.Message.Type != "text" {
		return nil, errNotText
	}
	var source webhook.SourceInterface
	base := webhook.Source{Type: e.Source.Type}
	switch e.Source.Type {
	case "user":
		source = webhook.UserSource{Source: base, UserId: e.Source.UserID}
	case "group":
		source = webhook.GroupSource{Source: base, GroupId: e.Source.GroupID, UserId: e.Source.UserID}
	case "room":
		source = webhook.RoomSource{Source: base, RoomId: e.Source.RoomID, UserId: e.Source.UserID}
	default:
		return nil, errNotText
	}
	return webhook.MessageEvent{
		Event:           webhook.Event{Type: e.Type},
		Source:          source,
		Timestamp:       e.Timestamp,
		Mode:            e.Mode,
		WebhookEventId:  e.WebhookEventID,
		DeliveryContext: e.DeliveryContext,
		ReplyToken:      e.ReplyToken,
		Message:         *e.Message,
	}, nil
}
