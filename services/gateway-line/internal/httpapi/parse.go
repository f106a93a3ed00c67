package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/line/line-bot-sdk-go/v8/linebot/webhook"
)

// parseRequest is webhook.ParseRequest (read the body, check X-Line-Signature, then parse) with
// one pass over the body for the events a chat is made of. The SDK's parser decodes a body five
// or six times (into maps of raw fields at every level, then into the event's type): about 7 %
// of gateway-line's CPU per message. A body whose every event is a text message from a user, a
// group or a room is decoded once into the same SDK types the SDK's parser would build (the text
// itself, mentions included, by the SDK's own TextMessageContent); any other body, or one that
// does not decode that way, goes to the SDK's parser, whose answer stands. So does a body whose
// keys the two would read differently (see plainKeys): the SDK looks its keys up by their exact
// names and keeps the last of a repeated key, encoding/json matches a name in any case and
// decodes a repeated object or list over what the first one filled in.
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
	if err := json.Unmarshal(body, &b); err != nil || !plainKeys(body) {
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

// plainKeys reports whether every object in body (valid JSON) names each of its keys once, spells
// every key the decoded types know exactly as they define it, and has no key with an escape or a
// byte outside ASCII. A body with such keys is read the same way by the one pass and by the SDK's
// parser; any other body is left to the SDK's.
func plainKeys(body []byte) bool {
	type frame struct {
		object bool
		start  int // the object's first key in keys
	}
	var framesBuf [8]frame
	var keysBuf [48][]byte
	frames, keys := framesBuf[:0], keysBuf[:0]
	expectKey := false
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{':
			frames = append(frames, frame{object: true, start: len(keys)})
			expectKey = true
		case '[':
			frames = append(frames, frame{start: len(keys)})
			expectKey = false
		case '}', ']':
			if len(frames) == 0 {
				return false
			}
			keys = keys[:frames[len(frames)-1].start]
			frames = frames[:len(frames)-1]
		case ',':
			expectKey = len(frames) > 0 && frames[len(frames)-1].object
		case '"':
			end, plain := i+1, true
			for ; end < len(body) && body[end] != '"'; end++ {
				switch c := body[end]; {
				case c == '\\':
					plain = false
					end++
				case c >= 0x80:
					plain = false
				}
			}
			if end >= len(body) {
				return false
			}
			if expectKey && len(frames) > 0 {
				key, siblings := body[i+1:end], keys[frames[len(frames)-1].start:]
				if !plain || !knownSpelling(key) || len(siblings) >= maxObjectKeys {
					return false
				}
				for _, k := range siblings {
					if bytes.Equal(k, key) {
						return false
					}
				}
				keys = append(keys, key)
				expectKey = false
			}
			i = end
		}
	}
	return len(frames) == 0
}

// maxObjectKeys bounds the keys of one object plainKeys compares with each other (a text event
// has fewer than 15): a body with more goes to the SDK's parser, so a signed body of many keys
// costs no more than the SDK's own parse.
const maxObjectKeys = 64

// knownSpelling reports whether key (ASCII) is either a key of the decoded types spelled as they
// define it, or no such key in any case.
func knownSpelling(key []byte) bool {
	if len(key) > len(lowerBuf{}) {
		return true
	}
	if _, ok := knownKeys[string(key)]; ok {
		return true
	}
	var lower lowerBuf
	for i, c := range key {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	_, known := knownLower[string(lower[:len(key)])]
	return !known
}

type lowerBuf [32]byte

// knownKeys are the JSON keys of every type a text body is decoded into, and knownLower the same
// in lower case.
var knownKeys, knownLower = func() (map[string]bool, map[string]bool) {
	keys, lower := map[string]bool{}, map[string]bool{}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				add(f.Type)
				continue
			}
			if name != "" && name != "-" {
				keys[name], lower[strings.ToLower(name)] = true, true
			}
		}
	}
	for _, v := range []any{textBody{}, textEvent{}, textSource{}, webhook.DeliveryContext{}, webhook.TextMessageContent{},
		webhook.Emoji{}, webhook.Mention{}, webhook.UserMentionee{}, webhook.AllMentionee{}} {
		add(reflect.TypeOf(v))
	}
	return keys, lower
}()
