package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/line/line-bot-sdk-go/v8/linebot/webhook"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
)

// Bodies as the Messaging API's webhook reference shows them: a text message from a user, from
// a group with a mention and emojis, from a room, a quoted one, a redelivered one, several at once.
var textBodies = map[string]string{
	"pretty-printed": `{
  "destination": "Ubot",
  "events": [
    {
      "type": "message",
      "message": {"type": "text", "id": "1", "text": "おはよう", "quoteToken": "q", "mention": {"mentionees": [ ]}},
      "webhookEventId": "01A",
      "deliveryContext": { "isRedelivery" : false },
      "timestamp": 1,
      "source": {"type": "user", "userId": "U1"},
      "replyToken": "r",
      "mode": "active"
    },
    {
      "type": "message", "message": {"type": "text", "id": "2", "text": "b", "quoteToken": "q2"},
      "webhookEventId": "01B", "deliveryContext": {}, "timestamp": 2,
      "source": {"type": "group", "groupId": "C1", "userId": "U2"}, "replyToken": "r2", "mode": "active"
    }
  ]
}
`,
	"user":               `{"destination":"Ubot00000000000000000000000000000","events":[{"type":"message","message":{"type":"text","id":"14353798921116","text":"Hello, world","quoteToken":"q3Plxr4AgKd..."},"webhookEventId":"01FZ74A0TDDPYRVKNK77XKC3ZR","deliveryContext":{"isRedelivery":false},"timestamp":1625665242211,"source":{"type":"user","userId":"U80696558e1aa831..."},"replyToken":"757913772c4646b784d4b7ce46d12671","mode":"active"}]}`,
	"group mention":      `{"destination":"Ubot00000000000000000000000000000","events":[{"replyToken":"nHuyWiB7yP5Zw52FIkcQobQuGDXCTA","type":"message","mode":"active","timestamp":1462629479859,"source":{"type":"group","groupId":"Ca56f94637c...","userId":"U4af4980629..."},"webhookEventId":"01FZ74A0TDDPYRVKNK77XKC3ZR","deliveryContext":{"isRedelivery":false},"message":{"id":"444573844083572737","type":"text","quoteToken":"q3Plxr4AgKd...","text":"@All @example Good Morning!! (love)","emojis":[{"index":29,"length":6,"productId":"5ac1bfd5040ab15980c9b435","emojiId":"001"}],"mention":{"mentionees":[{"index":0,"length":4,"type":"all"},{"index":5,"length":8,"userId":"U49585cd0d5...","type":"user","isSelf":false}]}}}]}`,
	"room":               `{"destination":"Ubot","events":[{"type":"message","message":{"type":"text","id":"1","text":"hi","quoteToken":"q"},"webhookEventId":"01A","deliveryContext":{"isRedelivery":true},"timestamp":1,"source":{"type":"room","roomId":"Ra8dbf4673c4c812cd491258042226c99","userId":"U1"},"replyToken":"r","mode":"standby"}]}`,
	"quoted":             `{"destination":"Ubot","events":[{"type":"message","message":{"type":"text","id":"2","text":"yes","quoteToken":"q2","quotedMessageId":"468789577898262530"},"webhookEventId":"01B","deliveryContext":{"isRedelivery":false},"timestamp":2,"source":{"type":"user","userId":"U2"},"replyToken":"r2","mode":"active"}]}`,
	"several":            `{"destination":"Ubot","events":[{"type":"message","message":{"type":"text","id":"3","text":"a","quoteToken":"q"},"webhookEventId":"01C","deliveryContext":{"isRedelivery":false},"timestamp":3,"source":{"type":"user","userId":"U3"},"replyToken":"r3","mode":"active"},{"type":"message","message":{"type":"text","id":"4","text":"b","quoteToken":"q"},"webhookEventId":"01D","deliveryContext":{"isRedelivery":false},"timestamp":4,"source":{"type":"group","groupId":"C1","userId":"U4"},"replyToken":"r4","mode":"active"}]}`,
	"no events":          `{"destination":"Ubot","events":[]}`,
	"null events":        `{"destination":"Ubot","events":null}`,
	"mention of the bot": `{"destination":"Ubot","events":[{"type":"message","message":{"type":"text","id":"6","text":"@bot hi","quoteToken":"q","mention":{"mentionees":[{"index":0,"length":4,"type":"user","userId":"Ubot","isSelf":true}]}},"webhookEventId":"01F","deliveryContext":{"isRedelivery":false},"timestamp":6,"source":{"type":"group","groupId":"C6","userId":"U6"},"replyToken":"r6","mode":"active"}]}`,
	"unknown keys":       `{"destination":"Ubot","future":1,"events":[{"type":"message","later":{"x":1},"message":{"type":"text","id":"5","text":"c","quoteToken":"q","markAsReadToken":"m"},"webhookEventId":"01E","deliveryContext":{"isRedelivery":false},"timestamp":5,"source":{"type":"user","userId":"U5","extra":true},"replyToken":"r5","mode":"active"}]}`,
}

// Bodies the one-pass parser leaves to the SDK's: other events, other messages, other sources,
// missing or null parts.
var otherBodies = map[string]string{
	"follow":         `{"destination":"Ubot","events":[{"type":"follow","timestamp":1,"source":{"type":"user","userId":"U1"},"replyToken":"r","mode":"active","webhookEventId":"01A","deliveryContext":{"isRedelivery":false},"follow":{"isUnblocked":false}}]}`,
	"postback":       `{"destination":"Ubot","events":[{"type":"postback","timestamp":1,"source":{"type":"user","userId":"U1"},"replyToken":"r","mode":"active","webhookEventId":"01A","deliveryContext":{"isRedelivery":false},"postback":{"data":"action=approve&job=job_20261128_001"}}]}`,
	"image":          `{"destination":"Ubot","events":[{"type":"message","message":{"type":"image","id":"1","quoteToken":"q","contentProvider":{"type":"line"}},"timestamp":1,"source":{"type":"user","userId":"U1"},"replyToken":"r","mode":"active","webhookEventId":"01A","deliveryContext":{"isRedelivery":false}}]}`,
	"sticker":        `{"destination":"Ubot","events":[{"type":"message","message":{"type":"sticker","id":"1","packageId":"446","stickerId":"1988","stickerResourceType":"STATIC","keywords":["x"],"quoteToken":"q"},"timestamp":1,"source":{"type":"user","userId":"U1"},"replyToken":"r","mode":"active","webhookEventId":"01A","deliveryContext":{"isRedelivery":false}}]}`,
	"text then join": `{"destination":"Ubot","events":[{"type":"message","message":{"type":"text","id":"1","text":"a","quoteToken":"q"},"timestamp":1,"source":{"type":"user","userId":"U1"},"replyToken":"r","mode":"active","webhookEventId":"01A","deliveryContext":{"isRedelivery":false}},{"type":"join","timestamp":2,"source":{"type":"group","groupId":"C1"},"replyToken":"r2","mode":"active","webhookEventId":"01B","deliveryContext":{"isRedelivery":false}}]}`,
	"unknown source": `{"destination":"Ubot","events":[{"type":"message","message":{"type":"text","id":"1","text":"a","quoteToken":"q"},"timestamp":1,"source":{"type":"channel","id":"x"},"replyToken":"r","mode":"active","webhookEventId":"01A","deliveryContext":{"isRedelivery":false}}]}`,
	"no source":      `{"destination":"Ubot","events":[{"type":"message","message":{"type":"text","id":"1","text":"a","quoteToken":"q"},"timestamp":1,"replyToken":"r","mode":"active","webhookEventId":"01A","deliveryContext":{"isRedelivery":false}}]}`,
	"null message":   `{"destination":"Ubot","events":[{"type":"message","message":null,"timestamp":1,"source":{"type":"user","userId":"U1"},"replyToken":"r","mode":"active","webhookEventId":"01A","deliveryContext":{"isRedelivery":false}}]}`,
	"wrong types":    `{"destination":"Ubot","events":[{"type":"message","message":{"type":"text","id":1,"text":"a"},"timestamp":"1","source":{"type":"user","userId":"U1"}}]}`,
	"not an object":  `[1,2,3]`,
}

// Bodies whose keys encoding/json and the SDK's parser read differently: a repeated object, list
// or field (encoding/json decodes the second over what the first filled in, the SDK keeps the
// last), a key in another case than the definition's (encoding/json takes it, the SDK does not),
// an escaped key. The one pass leaves them all to the SDK's parser.
var keyBodies = map[string]string{
	"repeated source":                    `{"destination":"Ubot","events":[{"type":"message","source":{"type":"user","userId":"U1"},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"},"timestamp":1,"replyToken":"r","mode":"active","webhookEventId":"01A","source":{"type":"group","groupId":"C1"}}]}`,
	"repeated message":                   `{"destination":"Ubot","events":[{"type":"message","source":{"type":"group","groupId":"C1","userId":"U1"},"message":{"type":"text","id":"1","text":"@bot a","quoteToken":"q","mention":{"mentionees":[{"index":0,"length":4,"type":"user","userId":"Ubot","isSelf":true}]}},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"},"timestamp":1,"replyToken":"r","mode":"active","webhookEventId":"01A"}]}`,
	"repeated events":                    `{"destination":"Ubot","events":[{"type":"message","source":{"type":"user","userId":"U1"},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"},"replyToken":"r1","webhookEventId":"01A"}],"events":[{"type":"message","source":{"type":"user","userId":"U2"},"message":{"type":"text","id":"2","text":"b"}}]}`,
	"repeated context":                   `{"destination":"Ubot","events":[{"type":"message","source":{"type":"user","userId":"U1"},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"},"deliveryContext":{"isRedelivery":true},"deliveryContext":{}}]}`,
	"repeated field":                     `{"destination":"Ubot","events":[{"type":"message","source":{"type":"user","userId":"U1","userId":"U2"},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"}}]}`,
	"repeated mention":                   `{"destination":"Ubot","events":[{"type":"message","source":{"type":"group","groupId":"C1","userId":"U1"},"message":{"type":"text","id":"1","text":"@bot a","quoteToken":"q","mention":{"mentionees":[{"index":0,"length":4,"type":"user","userId":"Ubot","isSelf":true}]},"mention":{"mentionees":[]}}}]}`,
	"cased source":                       `{"destination":"Ubot","events":[{"type":"message","Source":{"type":"user","userId":"U1"},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"}}]}`,
	"cased and exact":                    `{"destination":"Ubot","events":[{"type":"message","source":{"type":"user","userId":"U1"},"SOURCE":{"type":"user","userId":"U2"},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"}}]}`,
	"cased type":                         `{"destination":"Ubot","events":[{"Type":"message","source":{"type":"user","userId":"U1"},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"}}]}`,
	"cased destination":                  `{"Destination":"Ubot","events":[]}`,
	"escaped key":                        `{"destination":"Ubot","events":[{"type":"message","\u0073ource":{"type":"user","userId":"U1"},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"}}]}`,
	"folded key":                         `{"destination":"Ubot","events":[{"type":"message","\u017fource":{"type":"user","userId":"U1"},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"}}]}`,
	"repeated field in the second event": `{"destination":"Ubot","events":[{"type":"message","source":{"type":"user","userId":"U1"},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"}},{"type":"message","source":{"type":"user","userId":"U1","userId":"U2"},"message":{"type":"text","id":"2","text":"b","quoteToken":"q"}}]}`,
	"cased key in the second event":      `{"destination":"Ubot","events":[{"type":"message","source":{"type":"user","userId":"U1"},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"}},{"type":"message","source":{"type":"user","UserId":"U2"},"message":{"type":"text","id":"2","text":"b","quoteToken":"q"}}]}`,
	"empty object then a cased key":      `{"destination":"Ubot","events":[{"type":"message","deliveryContext":{},"Source":{"type":"user","userId":"U1"},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"}}]}`,
	"empty object then a repeated key":   `{"destination":"Ubot","events":[{"type":"message","source":{"type":"user","userId":"U1"},"deliveryContext":{},"source":{"type":"user","userId":"U2"},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"}}]}`,
	"non-ASCII key":                      `{"destination":"Ubot","events":[{"type":"message","ſource":{"type":"user","userId":"U1"},"message":{"type":"text","id":"1","text":"a","quoteToken":"q"}}]}`,
}

// The one-pass parser builds exactly what the SDK's parser builds, for every body it takes.
func TestTextEventsParseAsTheSDKParsesThem(t *testing.T) {
	for name, body := range textBodies {
		t.Run(name, func(t *testing.T) {
			if !takenAsTheSDK(t, body) {
				t.Fatal("left to the SDK's parser")
			}
		})
	}
}

func TestOtherBodiesAreLeftToTheSDK(t *testing.T) {
	for name, body := range otherBodies {
		t.Run(name, func(t *testing.T) {
			if got, ok := parseTextEvents([]byte(body)); ok {
				t.Fatalf("taken by the one-pass parser: %#v", got)
			}
		})
	}
}

func TestKeysReadDifferentlyAreLeftToTheSDK(t *testing.T) {
	for name, body := range keyBodies {
		t.Run(name, func(t *testing.T) {
			if got, ok := parseTextEvents([]byte(body)); ok {
				t.Fatalf("taken by the one-pass parser: %#v", got)
			}
		})
	}
}

// signed is a webhook request for body, signed with the channel secret.
func signed(body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(body))
	r.Header.Set("X-Line-Signature", fakeline.Sign(testSecret, []byte(body)))
	return r
}

const testSecret = "parse-test-secret"

// parseRequest answers every body exactly as the SDK's webhook.ParseRequest does.
func TestParseRequestIsTheSDKs(t *testing.T) {
	all := map[string]string{"not JSON": `{"events":[`}
	for _, bodies := range []map[string]string{textBodies, otherBodies, keyBodies} {
		maps.Copy(all, bodies)
	}
	for name, body := range all {
		t.Run(name, func(t *testing.T) {
			got, err := parseRequest(testSecret, signed(body))
			want, wantErr := webhook.ParseRequest(testSecret, signed(body))
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("error %v, the SDK's %v", err, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("parsed:\n%#v\nthe SDK:\n%#v", got, want)
			}
		})
	}
}

// A request fails before anything is parsed when its signature is not the channel's, with the
// size cap's own error when the body is too large, and never with the body in the error.
func TestParseRequestRefusals(t *testing.T) {
	body := textBodies["user"]
	forged := signed(body)
	forged.Header.Set("X-Line-Signature", fakeline.Sign("another-secret", []byte(body)))
	if _, err := parseRequest(testSecret, forged); !errors.Is(err, webhook.ErrInvalidSignature) {
		t.Fatalf("forged signature: %v", err)
	}
	unsigned := signed(body)
	unsigned.Header.Del("X-Line-Signature")
	if _, err := parseRequest(testSecret, unsigned); !errors.Is(err, webhook.ErrInvalidSignature) {
		t.Fatalf("no signature: %v", err)
	}

	big := signed(body)
	big.Body = http.MaxBytesReader(httptest.NewRecorder(), big.Body, int64(len(body)-1))
	var tooBig *http.MaxBytesError
	if _, err := parseRequest(testSecret, big); !errors.As(err, &tooBig) {
		t.Fatalf("body over the cap: %v", err)
	}

	secretText := `{"destination":"Ubot","events":[{"type":"message","message":{"type":"text","text":"my password is hunter2"` // cut short
	_, err := parseRequest(testSecret, signed(secretText))
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("a body that is not JSON: %v", err)
	}
}

// FuzzTextEventsParseAsTheSDK: whatever body the one pass takes, the SDK's parser takes too and
// builds the same request from it.
func FuzzTextEventsParseAsTheSDK(f *testing.F) {
	for _, bodies := range []map[string]string{textBodies, otherBodies, keyBodies} {
		for _, body := range bodies {
			f.Add(body)
		}
	}
	f.Fuzz(func(t *testing.T, body string) { takenAsTheSDK(t, body) })
}

// takenAsTheSDK reports whether the one pass takes body; when it does, the SDK's parser must take
// it too and build the same request.
func takenAsTheSDK(t *testing.T, body string) bool {
	t.Helper()
	got, ok := parseTextEvents([]byte(body))
	if !ok {
		return false
	}
	var want webhook.CallbackRequest
	if err := json.Unmarshal([]byte(body), &want); err != nil {
		t.Fatalf("taken by the one pass, refused by the SDK: %v", err)
	}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("one pass:\n%#v\nthe SDK:\n%#v", *got, want)
	}
	return true
}

func BenchmarkParseTextEvents(b *testing.B) {
	body := []byte(textBodies["group mention"])
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := parseTextEvents(body); !ok {
			b.Fatal("left to the SDK")
		}
	}
}

func BenchmarkParseSDK(b *testing.B) {
	body := []byte(textBodies["group mention"])
	b.ReportAllocs()
	for b.Loop() {
		var cb webhook.CallbackRequest
		if err := json.Unmarshal(body, &cb); err != nil {
			b.Fatal(err)
		}
	}
}

// plainKeys leaves an object of many keys to the SDK's parser (its comparisons would grow with
// the square of their number) and never panics, not even on a body that is not JSON.
func TestPlainKeysBounds(t *testing.T) {
	var many strings.Builder
	many.WriteString(`{"destination":"U","events":[]`)
	for i := range maxObjectKeys {
		fmt.Fprintf(&many, `,"k%d":0`, i)
	}
	many.WriteString("}")
	if plainKeys([]byte(many.String())) {
		t.Fatalf("%d keys in one object taken", maxObjectKeys+2)
	}
	if !plainKeys([]byte(textBodies["group mention"])) {
		t.Fatal("a text body refused")
	}
	for _, body := range []string{`{}"a"`, `"a"`, `}`, `]]`, `{"a`, `{"a":"b\`, `[{"a":1},"b"]`} {
		plainKeys([]byte(body))
	}
}

// jsonKeys is the set of keys encoding/json reads into t's fields: a field's json name (its Go
// name without one), with the fields of an embedded struct flattened in.
func jsonKeys(t reflect.Type) map[string]bool {
	keys := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			maps.Copy(keys, jsonKeys(f.Type))
		case !f.IsExported():
		case name == "":
			keys[f.Name] = true
		default:
			keys[name] = true
		}
	}
	return keys
}

// TestOnePassKeysAreTheSDKs: the one pass reads every key the SDK's types of a text message event
// define, and no other, so a new version of the SDK that adds a field fails here instead of the
// one pass silently dropping it.
func TestOnePassKeysAreTheSDKs(t *testing.T) {
	sources := jsonKeys(reflect.TypeFor[webhook.UserSource]())
	maps.Copy(sources, jsonKeys(reflect.TypeFor[webhook.GroupSource]()))
	maps.Copy(sources, jsonKeys(reflect.TypeFor[webhook.RoomSource]()))
	for _, tc := range []struct {
		name      string
		sdk, ours map[string]bool
	}{
		{"body", jsonKeys(reflect.TypeFor[webhook.CallbackRequest]()), jsonKeys(reflect.TypeFor[textBody]())},
		{"message event", jsonKeys(reflect.TypeFor[webhook.MessageEvent]()), jsonKeys(reflect.TypeFor[textEvent]())},
		{"source", sources, jsonKeys(reflect.TypeFor[textSource]())},
	} {
		if !maps.Equal(tc.sdk, tc.ours) {
			t.Errorf("%s: the SDK's keys %v, the one pass's %v", tc.name, slices.Sorted(maps.Keys(tc.sdk)), slices.Sorted(maps.Keys(tc.ours)))
		}
	}
	// The message itself is decoded by the SDK's own type, as are the delivery context, mention
	// and emoji: nothing to pin for them.
	if f, _ := reflect.TypeFor[textEvent]().FieldByName("Message"); f.Type != reflect.TypeFor[*webhook.TextMessageContent]() {
		t.Error("the one pass no longer decodes the text by the SDK's TextMessageContent")
	}
}
