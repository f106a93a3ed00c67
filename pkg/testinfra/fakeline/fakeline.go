// Package fakeline is a local LINE platform for tests: a Messaging API server (reply with
// single-use reply tokens, push with X-Line-Retry-Key semantics, loading animation) that checks
// the requests against LINE's limits and message definitions (text, confirm template, Flex —
// flex.go —, image) and can be taken down (Outage: 5xx, 429 with Retry-After,
// dropped connections, pushes accepted whose answer is lost), and a webhook client that signs
// its bodies with the channel secret exactly as LINE does.
package fakeline

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/internal/locked"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/outage"
)

// Message is a sent message as the server decoded it.
type Message struct {
	Type       string `json:"type"`
	Text       string `json:"text"`
	AltText    string `json:"altText"`
	QuickReply *struct {
		Items []struct {
			Type   string `json:"type"`
			Action Action `json:"action"`
		} `json:"items"`
	} `json:"quickReply"`
	Template *struct {
		Type    string   `json:"type"`
		Text    string   `json:"text"`
		Actions []Action `json:"actions"`
	} `json:"template"`
	// Contents is a Flex message's container (bubble or carousel) as sent.
	Contents json.RawMessage `json:"contents,omitempty"`
	// An image message's addresses.
	OriginalContentURL string `json:"originalContentUrl,omitempty"`
	PreviewImageURL    string `json:"previewImageUrl,omitempty"`
}

// Action is a template or quick reply action.
type Action struct {
	Type        string `json:"type"`
	Label       string `json:"label"`
	Data        string `json:"data"`
	DisplayText string `json:"displayText"`
}

// Sent is one accepted reply or push.
type Sent struct {
	Kind       string // reply or push
	To         string // push destination
	ReplyToken string
	RetryKey   string
	Messages   []Message
	// At is when the request arrived.
	At time.Time
}

// Server is the fake Messaging API.
type Server struct {
	*httptest.Server
	token string

	mu          sync.Mutex
	tokens      map[string]bool // reply token -> still usable
	accepted    map[string]bool // retry keys accepted
	sent        []Sent
	pushKeys    []string // retry key of every push attempt, in order
	loading     []string
	failPushes  int
	failStatus  int
	acceptFirst bool
	problems    []string
	onSent      func(Sent)
	// outage fails the next requests when the API is down.
	outage outage.Plan[Fault]
	// contents are the message contents users sent (images), by message id.
	contents map[string]content
	fetched  []string
}

// content is one message's content as the blob API serves it.
type content struct {
	data        []byte
	contentType string
}

// Fault is how the API fails one request during an outage.
type Fault struct {
	// Status is the answer's status (500, 503, 429 — with Retry-After: 1 —); with Reset instead
	// the connection is dropped without an answer (a network error).
	Status int
	Reset  bool
	// Accept: a push is nevertheless delivered before the failure (its answer is lost on the way
	// back), which a retry under the same retry key must find accepted (409). Replies have no
	// retry key and are never accepted by a fault.
	Accept bool
}

// Outage makes the next n requests to reply and push fail, cycling through faults, then the API
// recovers; n < 0 keeps it down until Up.
func (s *Server) Outage(n int, faults ...Fault) { s.outage.Start(n, faults...) }

// Up ends an outage.
func (s *Server) Up() { s.outage.Up() }

// Failed is the number of requests an outage failed.
func (s *Server) Failed() int { return s.outage.Failed() }

// fault takes the outage's next fault for a request.
func (s *Server) fault() (Fault, bool) { return s.outage.Next() }

// fail answers a request with f; s.mu is held.
func fail(w http.ResponseWriter, f Fault) {
	if f.Reset && outage.Drop(w) {
		return
	}
	if f.Status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, f.Status, map[string]string{"message": "The API rate limit has been exceeded. Try again later."})
		return
	}
	writeJSON(w, cmp.Or(f.Status, http.StatusInternalServerError), map[string]string{"message": "An error occurred in the backend"})
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// NewServer starts a Messaging API server that accepts the channel access token token.
func NewServer(token string) *Server {
	s := newServer(token)
	s.Start()
	return s
}

// NewTLSServer is NewServer over HTTPS, with HTTP/2 offered when http2 is set (as api.line.me
// does; a Fault's Reset needs HTTP/1.1, whose connection a handler can take over and drop). Its
// certificate (Certificate) is issued to 127.0.0.1 by httptest's own authority.
func NewTLSServer(token string, http2 bool) *Server {
	s := newServer(token)
	s.EnableHTTP2 = http2
	s.StartTLS()
	return s
}

func newServer(token string) *Server {
	s := &Server{token: token, tokens: map[string]bool{}, accepted: map[string]bool{}, contents: map[string]content{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/bot/message/reply", s.reply)
	mux.HandleFunc("POST /v2/bot/message/push", s.push)
	mux.HandleFunc("POST /v2/bot/chat/loading/start", s.loadingStart)
	// The blob API (api-data.line.me in production) on the same server: the gateway's
	// line.data_api_base_url points here in tests.
	mux.HandleFunc("GET /v2/bot/message/{messageId}/content", s.content)
	s.Server = httptest.NewUnstartedServer(s.auth(mux))
	return s
}

func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+s.token {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Authentication failed. Confirm that the access token in the authorization header is valid."})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// OnSent calls f with every reply and push the server accepts (load tools wait on it); f runs
// while the server holds its lock, so it must not call the server.
func (s *Server) OnSent(f func(Sent)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onSent = f
}

// record keeps an accepted message; s.mu is held.
func (s *Server) record(m Sent) {
	s.sent = append(s.sent, m)
	if s.onSent != nil {
		s.onSent(m)
	}
}

// IssueReplyToken registers a reply token as LINE would when it sends an event.
func (s *Server) IssueReplyToken(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[tok] = true
}

// FailPushes makes the next n push attempts answer status (e.g. 500). With acceptFirst, the
// first failing attempt is nevertheless delivered (the answer was lost on the way back), which
// is the case retry keys exist for: the retry must then get 409.
func (s *Server) FailPushes(n, status int, acceptFirst bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failPushes, s.failStatus, s.acceptFirst = n, status, acceptFirst
}

// Sent returns the accepted replies and pushes.
func (s *Server) Sent() []Sent {
	return locked.Copy(&s.mu, &s.sent)
}

// PushKeys returns the retry key of every push attempt, including refused ones.
func (s *Server) PushKeys() []string {
	return locked.Copy(&s.mu, &s.pushKeys)
}

// Loading returns the chat ids that got a loading animation.
func (s *Server) Loading() []string {
	return locked.Copy(&s.mu, &s.loading)
}

// Problems lists requests that broke a LINE rule (limits, formats).
func (s *Server) Problems() []string {
	return locked.Copy(&s.mu, &s.problems)
}

func (s *Server) problem(format string, args ...any) {
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

type sendBody struct {
	ReplyToken string    `json:"replyToken"`
	To         string    `json:"to"`
	Messages   []Message `json:"messages"`
}

func (s *Server) decode(w http.ResponseWriter, r *http.Request) (sendBody, bool) {
	var b sendBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "The request body has 1 error(s)"})
		return b, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(b.Messages); n == 0 || n > 5 {
		s.problem("%d messages in one request", n)
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Size must be between 1 and 5"})
		return b, false
	}
	for i, m := range b.Messages {
		switch m.Type {
		case "text":
			if l := len(utf16.Encode([]rune(m.Text))); l == 0 || l > 5000 {
				s.problem("message %d: text length %d", i, l)
			}
			if m.QuickReply != nil {
				if len(m.QuickReply.Items) > 13 {
					s.problem("message %d: %d quick reply items", i, len(m.QuickReply.Items))
				}
				for _, it := range m.QuickReply.Items {
					s.checkAction(i, it.Action)
				}
			}
		case "template":
			if m.Template == nil || m.Template.Type != "confirm" || len(m.Template.Actions) != 2 {
				s.problem("message %d: bad confirm template", i)
				continue
			}
			if l := len([]rune(m.Template.Text)); l > 240 {
				s.problem("message %d: confirm text length %d", i, l)
			}
			if l := len([]rune(m.AltText)); l == 0 || l > 400 {
				s.problem("message %d: alt text length %d", i, l)
			}
			for _, a := range m.Template.Actions {
				s.checkAction(i, a)
			}
		case "flex", "image":
			before := len(s.problems)
			if m.Type == "flex" {
				s.checkFlex(i, m)
			} else {
				s.checkImage(i, m)
			}
			s.checkQuickReply(i, m)
			if len(s.problems) > before {
				// LINE refuses the whole request.
				writeJSON(w, http.StatusBadRequest, map[string]any{"message": "A message (messages[" + fmt.Sprint(i) + "]) in the request body is invalid",
					"details": []map[string]string{{"message": s.problems[before], "property": fmt.Sprintf("messages[%d]", i)}}})
				return b, false
			}
		default:
			s.problem("message %d: unexpected type %q", i, m.Type)
		}
	}
	return b, true
}

func (s *Server) checkQuickReply(i int, m Message) {
	if m.QuickReply == nil {
		return
	}
	if len(m.QuickReply.Items) > 13 {
		s.problem("message %d: %d quick reply items", i, len(m.QuickReply.Items))
	}
	for _, it := range m.QuickReply.Items {
		s.checkAction(i, it.Action)
	}
}

func (s *Server) checkAction(i int, a Action) {
	if a.Type != "postback" {
		s.problem("message %d: action type %q", i, a.Type)
	}
	if len(a.Data) == 0 || len(a.Data) > 300 {
		s.problem("message %d: postback data of %d bytes", i, len(a.Data))
	}
	if l := len([]rune(a.Label)); l == 0 || l > 20 {
		s.problem("message %d: label length %d", i, l)
	}
}

func (s *Server) reply(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	b, ok := s.decode(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.fault(); ok {
		fail(w, f)
		return
	}
	if !s.tokens[b.ReplyToken] {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Invalid reply token"})
		return
	}
	s.tokens[b.ReplyToken] = false
	s.record(Sent{Kind: "reply", ReplyToken: b.ReplyToken, Messages: b.Messages, At: at})
	writeJSON(w, http.StatusOK, map[string]any{"sentMessages": sentIDs(len(s.sent), len(b.Messages))})
}

func (s *Server) push(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	key := r.Header.Get("X-Line-Retry-Key")
	b, ok := s.decode(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pushKeys = append(s.pushKeys, key)
	if key != "" && !uuidPattern.MatchString(key) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "The value for the 'X-Line-Retry-Key' header is invalid"})
		return
	}
	if f, ok := s.fault(); ok {
		if f.Accept && key != "" && !s.accepted[key] {
			s.accepted[key] = true
			s.record(Sent{Kind: "push", To: b.To, RetryKey: key, Messages: b.Messages, At: at})
		}
		fail(w, f)
		return
	}
	if s.failPushes > 0 {
		s.failPushes--
		if s.acceptFirst && key != "" && !s.accepted[key] {
			s.acceptFirst = false
			s.accepted[key] = true
			s.record(Sent{Kind: "push", To: b.To, RetryKey: key, Messages: b.Messages, At: at})
		}
		writeJSON(w, s.failStatus, map[string]string{"message": "An error occurred in the backend"})
		return
	}
	if key != "" && s.accepted[key] {
		w.Header().Set("X-Line-Accepted-Request-Id", "accepted-"+key)
		writeJSON(w, http.StatusConflict, map[string]string{"message": "The retry key is already accepted"})
		return
	}
	if key != "" {
		s.accepted[key] = true
	}
	s.record(Sent{Kind: "push", To: b.To, RetryKey: key, Messages: b.Messages, At: at})
	writeJSON(w, http.StatusOK, map[string]any{"sentMessages": sentIDs(len(s.sent), len(b.Messages))})
}

func (s *Server) loadingStart(w http.ResponseWriter, r *http.Request) {
	var b struct {
		ChatID  string `json:"chatId"`
		Seconds int    `json:"loadingSeconds"`
	}
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil || b.ChatID == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "The request body has 1 error(s)"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.Seconds != 0 && (b.Seconds < 5 || b.Seconds > 60 || b.Seconds%5 != 0) {
		s.problem("loadingSeconds %d", b.Seconds)
	}
	s.loading = append(s.loading, b.ChatID)
	writeJSON(w, http.StatusAccepted, map[string]any{})
}

func sentIDs(base, n int) []map[string]string {
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = map[string]string{"id": fmt.Sprintf("%d%03d", base, i), "quoteToken": "q"}
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Sign computes X-Line-Signature: base64(HMAC-SHA256(channel secret, body)).
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Event builds webhook event JSON objects.
type Event map[string]any

// TextEvent is a text message from a user (1:1) or, with group set, from a group.
func TextEvent(id, userID, group, replyToken, text string, tsMillis int64, redelivery bool) Event {
	return Event{
		"type": "message", "mode": "active", "timestamp": tsMillis, "webhookEventId": id,
		"deliveryContext": map[string]any{"isRedelivery": redelivery},
		"source":          source(userID, group), "replyToken": replyToken,
		"message": map[string]any{"id": "m" + id, "type": "text", "text": text, "quoteToken": "q" + id},
	}
}

// MentionBot makes a text message event start with "@Mio " and mention the bot itself there
// (mentionee type user, isSelf true, index and length in UTF-16 units), as LINE sends it when a
// group member writes @Mio.
func MentionBot(e Event) Event {
	if m, ok := e["message"].(map[string]any); ok {
		m["text"] = "@Mio " + fmt.Sprint(m["text"])
		m["mention"] = map[string]any{"mentionees": []any{
			map[string]any{"index": 0, "length": 4, "type": "user", "userId": "Ubot0000000000000000000000000000", "isSelf": true},
		}}
	}
	return e
}

// PostbackEvent is a button press.
func PostbackEvent(id, userID, replyToken, data string, tsMillis int64) Event {
	return Event{
		"type": "postback", "mode": "active", "timestamp": tsMillis, "webhookEventId": id,
		"deliveryContext": map[string]any{"isRedelivery": false},
		"source":          source(userID, ""), "replyToken": replyToken,
		"postback": map[string]any{"data": data},
	}
}

// AddContent makes data the content of message id (what a user's image message carries), served
// with contentType by GET /v2/bot/message/{id}/content.
func (s *Server) AddContent(id string, data []byte, contentType string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.contents[id] = content{data: data, contentType: contentType}
}

// Fetched lists the message ids whose content was downloaded, in order.
func (s *Server) Fetched() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.fetched...)
}

// content is getMessageContent of the Messaging API's blob endpoints (messaging-api-blob.yml):
// 200 with the binary body and its Content-Type, or 404 for a message without content (none
// was sent, or it is past the retention period).
func (s *Server) content(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("messageId")
	s.mu.Lock()
	c, ok := s.contents[id]
	s.fetched = append(s.fetched, id)
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not found"})
		return
	}
	w.Header().Set("Content-Type", c.contentType)
	w.Header().Set("Content-Length", fmt.Sprint(len(c.data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(c.data)
}

// ImageEvent is an image message from a user whose content LINE holds (contentProvider type
// line): its bytes are served under message id "m"+id once AddContent gave them.
func ImageEvent(id, userID, replyToken string, tsMillis int64) Event {
	return Event{
		"type": "message", "mode": "active", "timestamp": tsMillis, "webhookEventId": id,
		"deliveryContext": map[string]any{"isRedelivery": false},
		"source":          source(userID, ""), "replyToken": replyToken,
		"message": map[string]any{"id": "m" + id, "type": "image", "quoteToken": "q" + id,
			"contentProvider": map[string]any{"type": "line"}},
	}
}

// ExternalImageEvent is an image message whose content is hosted outside LINE (contentProvider
// type external, with originalContentUrl and previewImageUrl).
func ExternalImageEvent(id, userID, replyToken, url string, tsMillis int64) Event {
	e := ImageEvent(id, userID, replyToken, tsMillis)
	e["message"].(map[string]any)["contentProvider"] = map[string]any{"type": "external", "originalContentUrl": url, "previewImageUrl": url}
	return e
}

// OtherEvent is an event of a type the gateway ignores (e.g. "join", a sticker message).
func OtherEvent(id, typ, userID string, tsMillis int64) Event {
	e := Event{"type": typ, "mode": "active", "timestamp": tsMillis, "webhookEventId": id,
		"deliveryContext": map[string]any{"isRedelivery": false}, "source": source(userID, ""), "replyToken": "rt-" + id}
	if typ == "message" {
		e["message"] = map[string]any{"id": "m" + id, "type": "sticker", "packageId": "1", "stickerId": "1", "stickerResourceType": "STATIC"}
	}
	return e
}

// MessageOf is a message event of another type than text and image, in the shape LINE's
// webhook schema gives it (Messaging API, "Message event"): "sticker", "audio", "video", "file"
// or "location", from a user (1:1) or, with group set, from a group.
func MessageOf(typ, id, userID, group string, tsMillis int64) Event {
	msg := map[string]any{"id": "m" + id, "type": typ}
	switch typ {
	case "sticker":
		msg["packageId"], msg["stickerId"], msg["stickerResourceType"], msg["quoteToken"] = "446", "1988", "STATIC", "q"+id
	case "audio":
		msg["duration"], msg["contentProvider"] = 60000, map[string]any{"type": "line"}
	case "video":
		msg["duration"], msg["contentProvider"], msg["quoteToken"] = 60000, map[string]any{"type": "line"}, "q"+id
	case "file":
		msg["fileName"], msg["fileSize"] = "report.pdf", 2138
	case "location":
		msg["title"], msg["address"], msg["latitude"], msg["longitude"] = "my location", "1-3 Kioicho, Chiyoda-ku, Tokyo", 35.67966, 139.73669
	}
	return Event{"type": "message", "mode": "active", "timestamp": tsMillis, "webhookEventId": id,
		"deliveryContext": map[string]any{"isRedelivery": false}, "source": source(userID, group), "replyToken": "rt-" + id,
		"message": msg}
}

func source(userID, group string) map[string]any {
	if group != "" {
		return map[string]any{"type": "group", "groupId": group, "userId": userID}
	}
	return map[string]any{"type": "user", "userId": userID}
}

// Destination is the bot's own user ID, which LINE sends as the webhook's destination.
const Destination = "U0123456789abcdef0123456789abcdef"

// Body is a webhook request body.
func Body(events ...Event) []byte {
	if events == nil {
		events = []Event{}
	}
	b, _ := json.Marshal(map[string]any{"destination": Destination, "events": events})
	return b
}

// Post sends a webhook request signed with secret (an empty secret sends no signature).
func Post(client *http.Client, url, secret string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	if secret != "" {
		req.Header.Set("X-Line-Signature", Sign(secret, body))
	}
	return client.Do(req)
}

// Texts are the texts of a message as a user sees them: the text, a template's alt text and text.
func (m Message) Texts() []string {
	var out []string
	for _, s := range []string{m.Text, m.AltText} {
		if s != "" {
			out = append(out, s)
		}
	}
	if m.Template != nil && m.Template.Text != "" {
		out = append(out, m.Template.Text)
	}
	return out
}

// Postbacks are the postback actions of a message: its template's and its quick replies'.
func (m Message) Postbacks() []Action {
	var out []Action
	if m.Template != nil {
		for _, a := range m.Template.Actions {
			if a.Type == "postback" {
				out = append(out, a)
			}
		}
	}
	if m.Type == "flex" {
		out = append(out, flexPostbacks(m.Contents)...)
	}
	if m.QuickReply != nil {
		for _, it := range m.QuickReply.Items {
			if it.Action.Type == "postback" {
				out = append(out, it.Action)
			}
		}
	}
	return out
}
