package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Credentials the suite is started with; the fakes accept only these.
const (
	lineSecret    = "e2e-line-secret-0123456789abcdefghij"
	lineToken     = "e2e-line-token-0123456789abcdefghijklmnop"
	slackSecret   = "e2e-slack-secret-0123456789abcdefghij"
	slackToken    = "xoxb-e2e-0123456789-abcdefghijklmnopqrstuv"
	slackBotUser  = "UE2EBOT"
	openAIKey     = "sk-e2e-0123456789abcdefghij"
	approvalToken = "e2e-approval-token-0123456789abcdefghij"
)

// outMessage is one message a chat platform accepted: its texts and its buttons.
type outMessage struct {
	API     string // reply, push, chat.postMessage, chat.update
	To      string
	TS      string // Slack message ts
	Texts   []string
	Buttons []button
}

type button struct {
	Kind string // LINE: postback; Slack: the action_id
	Data string // LINE postback data or Slack button value
}

func (m outMessage) text() string { return strings.Join(m.Texts, "\n") }

// sink records accepted messages and the protocol problems a fake saw.
type sink struct {
	mu       sync.Mutex
	msgs     []outMessage
	problems []string
}

func (s *sink) add(m outMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, m)
}

func (s *sink) problem(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

func (s *sink) messages() []outMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]outMessage(nil), s.msgs...)
}

func (s *sink) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.problems...)
}

// waitMessage polls until a message satisfies ok.
func (s *sink) waitMessage(t *testing.T, what string, timeout time.Duration, ok func(outMessage) bool) outMessage {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, m := range s.messages() {
			if ok(m) {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s; messages: %+v; problems: %v", what, timeout, s.messages(), s.Problems())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fakeLINE is the LINE Messaging API: reply, push and the loading animation. A reply token is
// valid once, and only after a webhook carried it.
type fakeLINE struct {
	sink
	*httptest.Server
	mu     sync.Mutex
	tokens map[string]bool // issued reply token -> still unused
}

// issue makes a reply token valid, as LINE does when it sends the webhook that carries it.
func (f *fakeLINE) issue(token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens[token] = true
}

func (f *fakeLINE) useToken(token string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	ok := f.tokens[token]
	f.tokens[token] = false
	return ok
}

func startLINE(t *testing.T) *fakeLINE {
	f := &fakeLINE{tokens: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/bot/message/reply", f.message("reply"))
	mux.HandleFunc("POST /v2/bot/message/push", f.message("push"))
	mux.HandleFunc("POST /v2/bot/chat/loading/start", func(w http.ResponseWriter, r *http.Request) {
		if !f.authed(w, r) {
			return
		}
		writeJSON(w, http.StatusAccepted, map[string]any{})
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func (f *fakeLINE) authed(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") != "Bearer "+lineToken {
		f.problem("%s without the channel access token", r.URL.Path)
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Authentication failed"})
		return false
	}
	return true
}

func (f *fakeLINE) message(api string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !f.authed(w, r) {
			return
		}
		var body struct {
			ReplyToken string            `json:"replyToken"`
			To         string            `json:"to"`
			Messages   []json.RawMessage `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) == 0 || len(body.Messages) > 5 {
			f.problem("%s: bad body (%v, %d messages)", api, err, len(body.Messages))
			writeJSON(w, http.StatusBadRequest, map[string]any{"message": "The request body has 1 error(s)"})
			return
		}
		if api == "push" && r.Header.Get("X-Line-Retry-Key") == "" {
			f.problem("push without X-Line-Retry-Key")
		}
		to := body.To
		if api == "reply" {
			to = body.ReplyToken
			if !f.useToken(body.ReplyToken) {
				f.problem("reply with an unknown or used token %q", body.ReplyToken)
				writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Invalid reply token"})
				return
			}
		}
		sent := make([]map[string]string, 0, len(body.Messages))
		for i, raw := range body.Messages {
			var m any
			_ = json.Unmarshal(raw, &m)
			out := outMessage{API: api, To: to}
			collectLINE(m, &out)
			f.add(out)
			sent = append(sent, map[string]string{"id": fmt.Sprintf("%d", time.Now().UnixNano()+int64(i))})
		}
		writeJSON(w, http.StatusOK, map[string]any{"sentMessages": sent})
	}
}

// collectLINE walks a LINE message object for its texts and postback actions.
func collectLINE(v any, out *outMessage) {
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "postback" {
			data, _ := x["data"].(string)
			out.Buttons = append(out.Buttons, button{Kind: "postback", Data: data})
			return
		}
		for k, e := range x {
			if s, ok := e.(string); ok && (k == "text" || k == "altText") {
				out.Texts = append(out.Texts, s)
				continue
			}
			collectLINE(e, out)
		}
	case []any:
		for _, e := range x {
			collectLINE(e, out)
		}
	}
}

// lineSignature is X-Line-Signature: base64(HMAC-SHA256(channel secret, body)).
func lineSignature(body []byte) string {
	m := hmac.New(sha256.New, []byte(lineSecret))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// fakeSlack is the Slack Web API: auth.test, chat.postMessage and chat.update.
type fakeSlack struct {
	sink
	*httptest.Server
	mu  sync.Mutex
	seq int
}

func startSlack(t *testing.T) *fakeSlack {
	f := &fakeSlack{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/auth.test", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := f.form(w, r); !ok {
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "team_id": "TE2E", "user_id": slackBotUser, "bot_id": "BE2E"})
	})
	mux.HandleFunc("POST /api/chat.postMessage", f.chat("chat.postMessage"))
	mux.HandleFunc("POST /api/chat.update", f.chat("chat.update"))
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// form reads the form arguments and checks the bot token (header or token argument).
func (f *fakeSlack) form(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
		return nil, false
	}
	if r.Header.Get("Authorization") != "Bearer "+slackToken && r.PostForm.Get("token") != slackToken {
		f.problem("%s without the bot token", r.URL.Path)
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
		return nil, false
	}
	return r.PostForm, true
}

func (f *fakeSlack) chat(method string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		vals, ok := f.form(w, r)
		if !ok {
			return
		}
		channel := vals.Get("channel")
		if channel == "" {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "channel_not_found"})
			return
		}
		out := outMessage{API: method, To: channel + ":" + vals.Get("thread_ts")}
		if s := vals.Get("text"); s != "" {
			out.Texts = append(out.Texts, s)
		}
		if b := vals.Get("blocks"); b != "" {
			var blocks any
			if err := json.Unmarshal([]byte(b), &blocks); err != nil {
				f.problem("%s: blocks are not JSON: %v", method, err)
			}
			collectSlack(blocks, &out)
		}
		ts := vals.Get("ts")
		if method == "chat.postMessage" {
			f.mu.Lock()
			f.seq++
			ts = fmt.Sprintf("1790000001.%06d", f.seq)
			f.mu.Unlock()
		}
		out.TS = ts
		f.add(out)
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": channel, "ts": ts})
	}
}

// collectSlack walks Block Kit blocks for texts and buttons.
func collectSlack(v any, out *outMessage) {
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "button" {
			id, _ := x["action_id"].(string)
			val, _ := x["value"].(string)
			out.Buttons = append(out.Buttons, button{Kind: id, Data: val})
			return
		}
		if x["type"] == "mrkdwn" || x["type"] == "plain_text" {
			if s, ok := x["text"].(string); ok {
				out.Texts = append(out.Texts, s)
			}
			return
		}
		for _, e := range x {
			collectSlack(e, out)
		}
	case []any:
		for _, e := range x {
			collectSlack(e, out)
		}
	}
}

// slackSign sets X-Slack-Request-Timestamp and X-Slack-Signature (v0, HMAC-SHA256 over
// "v0:<ts>:<body>" with the signing secret).
func slackSign(req *http.Request, body []byte) {
	ts := fmt.Sprintf("%d", time.Now().Unix())
	m := hmac.New(sha256.New, []byte(slackSecret))
	fmt.Fprintf(m, "v0:%s:%s", ts, body)
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(m.Sum(nil)))
}

var jobInPrompt = regexp.MustCompile(`job_[0-9]{8}_(?:[0-9]{3,}|[0-9a-f]{8})`)

// fakeOpenAI is the Chat Completions API. It answers every request with a proposal creating
// docs/hello.md for the job named in the prompt.
type fakeOpenAI struct {
	sink
	*httptest.Server
	mu    sync.Mutex
	calls int
}

// helloContent is what the proposal writes.
const helloContent = "# Hello\n\nPicoClaw e2e\n"

func startOpenAI(t *testing.T) *fakeOpenAI {
	f := &fakeOpenAI{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+openAIKey {
			f.problem("chat/completions without the API key")
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}})
			return
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" || len(req.Messages) == 0 {
			f.problem("chat/completions: bad request (%v)", err)
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "bad request", "type": "invalid_request_error"}})
			return
		}
		f.mu.Lock()
		f.calls++
		f.mu.Unlock()
		job := ""
		for _, m := range req.Messages {
			if m.Role == "user" && job == "" {
				job = jobInPrompt.FindString(m.Content)
			}
		}
		patch, _ := json.Marshal([]map[string]any{{
			"type": "file_edit", "action": "create", "target": "docs/hello.md", "content": helloContent,
		}})
		proposal, _ := json.Marshal(map[string]any{
			"job_id": job,
			"plan":   "docs/hello.md を作成します。",
			"patch":  string(patch),
			"risk": map[string]any{"level": "low", "destructive": false, "compatibility_issues": []string{},
				"rollback_possible": true, "notes": ""},
			"cost_hint":     map[string]any{"estimated_tokens": 0, "estimated_cost_usd": 0, "near_limit": false},
			"need_approval": true,
			"uses_browser":  false,
			"task_type":     "docs",
		})
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-e2e", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": string(proposal)}}},
			"usage": map[string]any{"prompt_tokens": 420, "completion_tokens": 120, "total_tokens": 540},
		})
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func (f *fakeOpenAI) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// fakeOllama is a local Ollama server with the suite's models installed. /api/chat answers a
// classifier prompt with a CHAT route and anything else with a short chat reply.
type fakeOllama struct {
	sink
	*httptest.Server
}

func startOllama(t *testing.T) *fakeOllama {
	f := &fakeOllama{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, r *http.Request) {
		var models []map[string]any
		for _, m := range []string{"chat-v1:latest", "worker-v1:latest"} {
			models = append(models, map[string]any{"name": m, "model": m, "size": 1})
		}
		writeJSON(w, http.StatusOK, map[string]any{"models": models})
	})
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"version": "0.12.0"})
	})
	mux.HandleFunc("POST /api/show", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"parameters": "num_ctx 8192",
			"model_info": map[string]any{"llama.context_length": 32768}})
	})
	mux.HandleFunc("POST /api/chat", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			f.problem("api/chat: %v", err)
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
			return
		}
		var all strings.Builder
		for _, m := range req.Messages {
			all.WriteString(m.Content)
		}
		content := "はい、Mio です。"
		if strings.Contains(all.String(), `"route"`) {
			content = `{"route":"CHAT","confidence":0.9,"reason":"conversation","evidence":[]}`
		}
		writeJSON(w, http.StatusOK, map[string]any{"model": req.Model, "created_at": time.Now().UTC().Format(time.RFC3339Nano),
			"message": map[string]any{"role": "assistant", "content": content}, "done": true, "done_reason": "stop",
			"prompt_eval_count": 10, "eval_count": 5})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.problem("unexpected Ollama call %s %s %s", r.Method, r.URL.Path, body)
		http.NotFound(w, r)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}
