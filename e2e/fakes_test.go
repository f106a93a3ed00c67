package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
)

// Credentials the suite is started with; the fakes accept only these.
const (
	lineSecret    = "e2e-line-secret-0123456789abcdefghij"
	lineToken     = "e2e-line-token-0123456789abcdefghijklmnop"
	slackSecret   = "e2e-slack-secret-0123456789abcdefghij"
	slackToken    = "xoxb-e2e-0123456789-abcdefghijklmnopqrstuv"
	slackBotUser  = fakeslack.BotUserID
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

// startLINE starts the shared LINE Messaging API fake for the suite's channel access token.
func startLINE(t *testing.T) *fakeline.Server {
	f := fakeline.NewServer(lineToken)
	t.Cleanup(f.Close)
	return f
}

// startSlack starts the shared Slack Web API fake for the suite's bot token; its API base URL
// is URL + "/api".
func startSlack(t *testing.T) *fakeslack.Server {
	f := fakeslack.NewServer(slackToken)
	t.Cleanup(f.Close)
	return f
}

// lineMessages are the messages the LINE fake accepted, one per LINE message.
func (s *suite) lineMessages() []outMessage {
	var out []outMessage
	for _, sent := range s.line.Sent() {
		to := sent.To
		if sent.Kind == "reply" {
			to = sent.ReplyToken
		}
		for _, m := range sent.Messages {
			om := outMessage{API: sent.Kind, To: to, Texts: m.Texts()}
			for _, a := range m.Postbacks() {
				om.Buttons = append(om.Buttons, button{Kind: "postback", Data: a.Data})
			}
			out = append(out, om)
		}
	}
	return out
}

// slackMessages are the posts and updates the Slack fake accepted.
func (s *suite) slackMessages() []outMessage {
	var out []outMessage
	for _, p := range s.slack.Posts() {
		om := outMessage{API: p.Method, To: p.Channel + ":" + p.ThreadTS, TS: p.TS, Texts: p.Texts()}
		for _, b := range p.Buttons() {
			om.Buttons = append(om.Buttons, button{Kind: b.ActionID, Data: b.Value})
		}
		out = append(out, om)
	}
	return out
}

// waitMessage polls until a message of list satisfies ok.
func waitMessage(t *testing.T, what string, timeout time.Duration, list func() []outMessage, problems func() []string,
	ok func(outMessage) bool) outMessage {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, m := range list() {
			if ok(m) {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s; messages: %+v; problems: %v", what, timeout, list(), problems())
		}
		time.Sleep(20 * time.Millisecond)
	}
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
