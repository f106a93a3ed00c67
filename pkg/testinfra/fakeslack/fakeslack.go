// Package fakeslack is a local Slack for tests: a Web API server (auth.test, chat.postMessage
// with message metadata, chat.postEphemeral, chat.update, conversations.replies and
// conversations.history, the file upload flow of files.go) that checks requests against Slack's
// limits and block reference (blocks.go) and can be taken down
// (Outage: 5xx, 429 with Retry-After, dropped connections, posts made whose answer is lost), and
// clients for the Events API and interactivity that sign their bodies with the signing secret
// exactly as Slack does.
package fakeslack

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/internal/locked"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/outage"
)

// BotUserID is the bot user the fake workspace reports from auth.test.
const BotUserID = "UBOT0000001"

// Block is a Block Kit block as posted.
type Block struct {
	Type     string `json:"type"`
	BlockID  string `json:"block_id"`
	Text     *Text  `json:"text"`
	Elements []struct {
		Type     string `json:"type"`
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
		Style    string `json:"style"`
		// Text is a text object for buttons and a plain string for context elements.
		Text json.RawMessage `json:"text"`
	} `json:"elements"`
}

// Text is a text object.
type Text struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Post is one accepted chat.postMessage or chat.update.
type Post struct {
	Method  string
	Channel string
	// User is the only user who sees a chat.postEphemeral message.
	User     string
	ThreadTS string
	TS       string // ts of the new message, or the updated one
	Text     string
	Blocks   []Block
	// Metadata is the message's metadata (chat.postMessage's metadata argument), if any.
	Metadata *Metadata
}

// Metadata is a message's metadata: an event type and its payload.
type Metadata struct {
	EventType    string         `json:"event_type"`
	EventPayload map[string]any `json:"event_payload"`
}

// Fault is how the Web API fails one call during an outage.
type Fault struct {
	// Status is the answer's status (500, 503, 429 — with Retry-After: 1 —); with Reset instead
	// the connection is dropped without an answer (a network error).
	Status int
	Reset  bool
	// Accept: the message is nevertheless posted before the failure (the answer is lost on the
	// way back), as Slack can do; a retry must find it instead of posting it again.
	Accept bool
}

// Server is the fake Web API; its URL + "/api" is the API base URL.
type Server struct {
	*httptest.Server
	token string

	mu         sync.Mutex
	posts      []Post
	seq        int
	failPosts  int
	failAfter  int
	failStatus int
	problems   []string
	files      map[string]*pendingFile
	uploads    []Upload
	// outage fails the next requests when the API is down.
	outage outage.Plan[Fault]
	// shared are files users shared, by id, served under /files-pri/ as files.slack.com does.
	shared    map[string]file
	downloads []string
}

type file struct {
	name, mimetype string
	data           []byte
}

// Outage makes the next n calls of chat.postMessage, chat.update and chat.postEphemeral fail, cycling through faults, then the API
// recovers; n < 0 keeps it down until Up.
func (s *Server) Outage(n int, faults ...Fault) { s.outage.Start(n, faults...) }

// Up ends an outage.
func (s *Server) Up() { s.outage.Up() }

// Failed is the number of requests an outage failed.
func (s *Server) Failed() int { return s.outage.Failed() }

// fault takes the outage's next fault for a request.
func (s *Server) fault() (Fault, bool) { return s.outage.Next() }

// fail answers a call with f.
func fail(w http.ResponseWriter, f Fault) {
	if f.Reset && outage.Drop(w) {
		return
	}
	status := f.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, status, map[string]any{"ok": false, "error": "ratelimited"})
		return
	}
	writeJSON(w, status, map[string]any{"ok": false, "error": "service_unavailable"})
}

// NewServer starts a Web API that accepts the bot token token.
func NewServer(token string) *Server {
	s := &Server{token: token, shared: map[string]file{}}
	mux := http.NewServeMux()
	// files.slack.com on the same server: the gateway's slack.files_base_url points here in tests.
	mux.HandleFunc("GET /files-pri/{teamFile}/download/{name}", s.download)
	mux.HandleFunc("POST /api/auth.test", s.authTest)
	mux.HandleFunc("POST /api/chat.postMessage", s.chat("chat.postMessage"))
	mux.HandleFunc("POST /api/chat.update", s.chat("chat.update"))
	mux.HandleFunc("POST /api/chat.postEphemeral", s.chat("chat.postEphemeral"))
	mux.HandleFunc("POST /api/conversations.replies", s.conversations("conversations.replies"))
	mux.HandleFunc("POST /api/conversations.history", s.conversations("conversations.history"))
	mux.HandleFunc("GET /api/conversations.replies", s.conversations("conversations.replies"))
	mux.HandleFunc("GET /api/conversations.history", s.conversations("conversations.history"))
	s.registerFiles(mux)
	s.Server = httptest.NewServer(mux)
	return s
}

// APIURL is the base URL to configure.
func (s *Server) APIURL() string { return s.URL + "/api" }

// FailPosts lets after more chat.postMessage calls succeed, then makes the next n answer status
// (500, or 429 with Retry-After).
func (s *Server) FailPosts(after, n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAfter, s.failPosts, s.failStatus = after, n, status
}

// Posts returns what was accepted.
func (s *Server) Posts() []Post {
	return locked.Copy(&s.mu, &s.posts)
}

// Problems lists requests that broke a Slack rule.
func (s *Server) Problems() []string {
	return locked.Copy(&s.mu, &s.problems)
}

// authed accepts the token as Slack does: in the Authorization header or as the token argument.
func (s *Server) authed(w http.ResponseWriter, r *http.Request, vals url.Values) bool {
	if r.Header.Get("Authorization") == "Bearer "+s.token || (vals != nil && vals.Get("token") == s.token) {
		return true
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
	return false
}

func (s *Server) authTest(w http.ResponseWriter, r *http.Request) {
	vals, _ := params(r)
	if !s.authed(w, r, vals) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "url": "https://example.slack.com/", "team": "T", "user": "picoclaw",
		"team_id": "T0001", "user_id": BotUserID, "bot_id": "B0001"})
}

func (s *Server) chat(method string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		vals, err := params(r)
		if err != nil {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
			return
		}
		if !s.authed(w, r, vals) {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		f, down := s.fault()
		if down && !(f.Accept && method == "chat.postMessage") {
			fail(w, f)
			return
		}
		if method == "chat.postMessage" && s.failPosts > 0 && s.failAfter > 0 {
			s.failAfter--
		} else if method == "chat.postMessage" && s.failPosts > 0 {
			s.failPosts--
			if s.failStatus == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "1")
			}
			writeJSON(w, s.failStatus, map[string]any{"ok": false, "error": "service_unavailable"})
			return
		}
		p := Post{Method: method, Channel: vals.Get("channel"), User: vals.Get("user"), ThreadTS: vals.Get("thread_ts"), Text: vals.Get("text"), TS: vals.Get("ts")}
		if p.Channel == "" {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "channel_not_found"})
			return
		}
		if method == "chat.postEphemeral" {
			// chat.postEphemeral: user is required; the answer names the message by message_ts.
			if p.User == "" {
				writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "user_not_in_channel"})
				return
			}
			s.check(p)
			s.seq++
			p.TS = fmt.Sprintf("1700000000.%06d", s.seq)
			s.posts = append(s.posts, p)
			writeJSON(w, http.StatusOK, map[string]any{"ok": true, "message_ts": p.TS})
			return
		}
		if b := vals.Get("blocks"); b != "" {
			if err := json.Unmarshal([]byte(b), &p.Blocks); err != nil {
				writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_blocks"})
				return
			}
			for _, pr := range checkBlocks(b) {
				s.problems = append(s.problems, method+": "+pr)
			}
		}
		if m := vals.Get("metadata"); m != "" {
			p.Metadata = &Metadata{}
			if err := json.Unmarshal([]byte(m), p.Metadata); err != nil {
				writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_metadata_format"})
				return
			}
		}
		s.check(p)
		if method == "chat.postMessage" {
			s.seq++
			p.TS = fmt.Sprintf("1700000000.%06d", s.seq)
		}
		s.posts = append(s.posts, p)
		if down {
			fail(w, f) // posted, but the answer is lost
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": p.Channel, "ts": p.TS,
			"message": map[string]any{"text": p.Text, "ts": p.TS, "thread_ts": p.ThreadTS}})
	}
}

// conversations serves conversations.replies (the thread ts names: its replies, oldest first) and
// conversations.history (the channel's top-level messages, newest first), with each message's
// metadata only when include_all_metadata is set, paged by cursor as Slack does.
func (s *Server) conversations(method string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		vals, err := params(r)
		if err != nil {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
			return
		}
		for k, v := range r.URL.Query() {
			if vals.Get(k) == "" {
				vals[k] = v
			}
		}
		if !s.authed(w, r, vals) {
			return
		}
		channel, ts := vals.Get("channel"), vals.Get("ts")
		if channel == "" || (method == "conversations.replies" && ts == "") {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_arguments"})
			return
		}
		meta := vals.Get("include_all_metadata") == "1" || vals.Get("include_all_metadata") == "true"
		limit, _ := strconv.Atoi(vals.Get("limit"))
		if limit <= 0 || limit > 1000 {
			limit = 100
		}
		start, _ := strconv.Atoi(vals.Get("cursor"))
		s.mu.Lock()
		var msgs []map[string]any
		for _, p := range s.posts {
			if p.Method != "chat.postMessage" || p.Channel != channel {
				continue
			}
			if (method == "conversations.replies" && p.ThreadTS != ts && p.TS != ts) || (method == "conversations.history" && p.ThreadTS != "") {
				continue
			}
			m := map[string]any{"type": "message", "user": BotUserID, "bot_id": "B0001", "text": p.Text, "ts": p.TS}
			if p.ThreadTS != "" {
				m["thread_ts"] = p.ThreadTS
			}
			if meta && p.Metadata != nil {
				m["metadata"] = p.Metadata
			}
			msgs = append(msgs, m)
		}
		s.mu.Unlock()
		if method == "conversations.history" {
			slices.Reverse(msgs)
		}
		next := ""
		if start > len(msgs) {
			start = len(msgs)
		}
		msgs = msgs[start:]
		if len(msgs) > limit {
			msgs, next = msgs[:limit], strconv.Itoa(start+limit)
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "messages": msgs, "has_more": next != "",
			"response_metadata": map[string]any{"next_cursor": next}})
	}
}

func (s *Server) check(p Post) {
	if p.Text == "" && len(p.Blocks) == 0 {
		s.problems = append(s.problems, "message without text")
	}
	if n := len([]rune(p.Text)); n > 40000 {
		s.problems = append(s.problems, fmt.Sprintf("text of %d characters", n))
	}
	if len(p.Blocks) > 50 {
		s.problems = append(s.problems, fmt.Sprintf("%d blocks", len(p.Blocks)))
	}
	for _, b := range p.Blocks {
		if b.Text != nil && len([]rune(b.Text.Text)) > 3000 {
			s.problems = append(s.problems, fmt.Sprintf("section text of %d characters", len([]rune(b.Text.Text))))
		}
		if b.Type != "actions" {
			continue
		}
		if len(b.Elements) > 25 {
			s.problems = append(s.problems, fmt.Sprintf("%d buttons", len(b.Elements)))
		}
		for _, e := range b.Elements {
			if len([]rune(e.Value)) > 2000 || e.ActionID == "" {
				s.problems = append(s.problems, "bad button")
			}
		}
	}
}

// params reads form-encoded or JSON Web API arguments.
func params(r *http.Request) (url.Values, error) {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var m map[string]any
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			return nil, err
		}
		v := url.Values{}
		for k, x := range m {
			switch y := x.(type) {
			case string:
				v.Set(k, y)
			default:
				b, _ := json.Marshal(y)
				v.Set(k, string(b))
			}
		}
		return v, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	return r.PostForm, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ElementText is the text of a block element: a plain string (context) or a text object's text.
func ElementText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var t Text
	_ = json.Unmarshal(raw, &t)
	return t.Text
}

// Sign computes X-Slack-Signature for a body sent at ts.
func Sign(secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "v0:%d:", ts)
	m.Write(body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

// Request describes one signed request.
type Request struct {
	URL         string
	Secret      string // signs with this secret; empty = no signature headers
	At          time.Time
	Body        []byte
	ContentType string
	RetryNum    int
}

// Do sends r.
func Do(client *http.Client, r Request) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", r.ContentType)
	if r.Secret != "" {
		at := r.At
		if at.IsZero() {
			at = time.Now()
		}
		req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(at.Unix(), 10))
		req.Header.Set("X-Slack-Signature", Sign(r.Secret, at.Unix(), r.Body))
	}
	if r.RetryNum > 0 {
		req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(r.RetryNum))
		req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), nil
}

// EventBody wraps an inner event in an event_callback envelope.
func EventBody(eventID string, inner map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{
		"token": "legacy", "team_id": "T0001", "api_app_id": "A0001", "type": "event_callback",
		"event_id": eventID, "event_time": time.Now().Unix(), "event": inner,
		"authorizations": []map[string]any{{"team_id": "T0001", "user_id": BotUserID, "is_bot": true}},
	})
	return b
}

// Mention is an app_mention in a channel (thread "" starts a thread at ts).
func Mention(user, channel, ts, thread, text string) map[string]any {
	e := map[string]any{"type": "app_mention", "user": user, "text": "<@" + BotUserID + "> " + text,
		"ts": ts, "channel": channel, "event_ts": ts}
	if thread != "" {
		e["thread_ts"] = thread
	}
	return e
}

// DM is a direct message to the bot.
func DM(user, channel, ts, text string) map[string]any {
	return map[string]any{"type": "message", "channel_type": "im", "user": user, "text": text,
		"ts": ts, "channel": channel, "event_ts": ts}
}

// AddFile uploads a file as a user would and returns its file object as events carry it
// (files[] of a file_share message: id, name, mimetype, filetype, size, url_private,
// url_private_download on the server's own address standing in for files.slack.com).
func (s *Server) AddFile(id, name, mimetype string, data []byte) map[string]any {
	s.mu.Lock()
	s.shared[id] = file{name: name, mimetype: mimetype, data: data}
	s.mu.Unlock()
	u := s.URL + "/files-pri/T0001-" + id + "/download/" + url.PathEscape(name)
	return map[string]any{"id": id, "created": time.Now().Unix(), "timestamp": time.Now().Unix(), "name": name, "title": name,
		"mimetype": mimetype, "filetype": strings.TrimPrefix(mimetype, "image/"), "pretty_type": mimetype, "user": "",
		"size": len(data), "mode": "hosted", "is_external": false, "is_public": false,
		"url_private": strings.Replace(u, "/download/", "/", 1), "url_private_download": u}
}

// Downloads lists the file ids downloaded with the bot token, in order.
func (s *Server) Downloads() []string { return locked.Copy(&s.mu, &s.downloads) }

// download serves url_private_download: with the bot token in Authorization the file's bytes;
// without it Slack redirects to its sign-in page, as files.slack.com does.
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	_, id, _ := strings.Cut(r.PathValue("teamFile"), "-")
	if r.Header.Get("Authorization") != "Bearer "+s.token {
		http.Redirect(w, r, "/signin?redir="+url.QueryEscape(r.URL.Path), http.StatusFound)
		return
	}
	s.mu.Lock()
	f, ok := s.shared[id]
	if ok {
		s.downloads = append(s.downloads, id)
	}
	s.mu.Unlock()
	if !ok || r.PathValue("name") != f.name {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.mimetype)
	w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
	_, _ = w.Write(f.data)
}

// FileShareDM is a direct message with files attached (message subtype file_share).
func FileShareDM(user, channel, ts, text string, files ...map[string]any) map[string]any {
	e := DM(user, channel, ts, text)
	e["subtype"], e["files"], e["upload"], e["display_as_bot"] = "file_share", files, false, false
	return e
}

// URLVerification is Slack's endpoint check.
func URLVerification(challenge string) []byte {
	b, _ := json.Marshal(map[string]any{"token": "legacy", "challenge": challenge, "type": "url_verification"})
	return b
}

// BlockAction is the interactivity body (form-encoded payload) of a button press.
func BlockAction(user, channel, messageTS, threadTS, messageText, triggerID, actionID, value string) []byte {
	msg := map[string]any{"type": "message", "ts": messageTS, "text": messageText, "user": BotUserID}
	if threadTS != "" {
		msg["thread_ts"] = threadTS
	}
	p, _ := json.Marshal(map[string]any{
		"type": "block_actions", "trigger_id": triggerID, "api_app_id": "A0001",
		"team":      map[string]any{"id": "T0001", "domain": "example"},
		"user":      map[string]any{"id": user, "username": "someone", "team_id": "T0001"},
		"channel":   map[string]any{"id": channel, "name": "general"},
		"container": map[string]any{"type": "message", "message_ts": messageTS, "channel_id": channel, "is_ephemeral": false},
		"message":   msg,
		"actions": []map[string]any{{"type": "button", "action_id": actionID, "block_id": "decision", "value": value,
			"action_ts": "1700000001.000100", "text": map[string]any{"type": "plain_text", "text": actionID}}},
		"response_url": "https://hooks.slack.invalid/actions/T0001/1/x",
	})
	return []byte(url.Values{"payload": {string(p)}}.Encode())
}

// Texts are the texts of a post: its text, its sections' and its context elements'.
func (p Post) Texts() []string {
	var out []string
	if p.Text != "" {
		out = append(out, p.Text)
	}
	for _, b := range p.Blocks {
		if b.Text != nil && b.Text.Text != "" {
			out = append(out, b.Text.Text)
		}
		if b.Type == "context" {
			for _, e := range b.Elements {
				if s := ElementText(e.Text); s != "" {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// Button is a button of a post.
type Button struct{ ActionID, Value string }

// Buttons are the buttons of a post's actions blocks.
func (p Post) Buttons() []Button {
	var out []Button
	for _, b := range p.Blocks {
		for _, e := range b.Elements {
			if e.Type == "button" {
				out = append(out, Button{ActionID: e.ActionID, Value: e.Value})
			}
		}
	}
	return out
}
