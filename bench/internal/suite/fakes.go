package suite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
)

// Reply is a reply the fake LINE API accepted.
type Reply struct {
	At   time.Time
	Text string
}

// LineAPI is the shared fake LINE Messaging API (fakeline: channel access token, single-use reply
// tokens, retry keys, LINE's limits) with what the load tool needs on top: it hands every reply
// to whoever awaits its reply token, and counts.
type LineAPI struct {
	*fakeline.Server
	mu      sync.Mutex
	waiters map[string]chan Reply
	// Replies counts accepted replies; Unawaited those nobody waited for; Pushes the pushes.
	Replies, Unawaited, Pushes atomic.Int64
}

// NewLineAPI starts the fake.
func NewLineAPI() *LineAPI {
	l := &LineAPI{Server: fakeline.NewServer(LineToken), waiters: map[string]chan Reply{}}
	l.OnSent(l.sent)
	return l
}

func (l *LineAPI) sent(s fakeline.Sent) {
	if s.Kind != "reply" {
		l.Pushes.Add(1)
		return
	}
	l.Replies.Add(1)
	l.mu.Lock()
	ch, ok := l.waiters[s.ReplyToken]
	delete(l.waiters, s.ReplyToken)
	l.mu.Unlock()
	if !ok {
		l.Unawaited.Add(1)
		return
	}
	ch <- Reply{At: s.At, Text: s.Messages[0].Text}
}

// Await returns a channel that receives the reply to token and makes the token valid, as the
// webhook carrying it does at LINE; call it before sending the event.
func (l *LineAPI) Await(token string) <-chan Reply {
	ch := make(chan Reply, 1)
	l.mu.Lock()
	l.waiters[token] = ch
	l.mu.Unlock()
	l.IssueReplyToken(token)
	return ch
}

// Forget drops a waiter whose reply will not be awaited any more.
func (l *LineAPI) Forget(token string) {
	l.mu.Lock()
	delete(l.waiters, token)
	l.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// Ollama is a fake Ollama server with zero model latency: JSON-mode calls (the router's
// classifier) get a confident CHAT classification, other calls a short chat answer.
type Ollama struct {
	*httptest.Server
	// Calls counts /api/chat requests.
	Calls atomic.Int64
}

// NewOllama starts the fake; models are the names /api/tags lists.
func NewOllama(models ...string) *Ollama {
	o := &Ollama{}
	var tags []string
	for _, m := range models {
		tags = append(tags, fmt.Sprintf(`{"name":%q,"model":%q}`, m, m))
	}
	tagsBody := `{"models":[` + strings.Join(tags, ",") + `]}`
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, tagsBody) })
	mux.HandleFunc("POST /api/show", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		writeJSON(w, http.StatusOK, `{"parameters":"","model_info":{"llama.context_length":32768}}`)
	})
	mux.HandleFunc("POST /api/chat", o.chat)
	o.Server = httptest.NewServer(mux)
	return o
}

func (o *Ollama) chat(w http.ResponseWriter, r *http.Request) {
	o.Calls.Add(1)
	var req struct {
		Model    string `json:"model"`
		Format   string `json:"format"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		writeJSON(w, http.StatusBadRequest, `{"error":"invalid request"}`)
		return
	}
	content := "了解です。ほかに何かあれば気軽にどうぞ。"
	if req.Format == "json" {
		content = `{"route":"CHAT","confidence":0.95,"reason":"small talk","evidence":[]}`
	}
	in := 0
	for _, m := range req.Messages {
		in += len(m.Content) / 4
	}
	body, _ := json.Marshal(map[string]any{
		"model": req.Model, "created_at": time.Now().UTC().Format(time.RFC3339Nano),
		"message": map[string]string{"role": "assistant", "content": content},
		"done":    true, "done_reason": "stop", "prompt_eval_count": max(in, 1), "eval_count": len(content) / 4,
	})
	writeJSON(w, http.StatusOK, string(body))
}

// Webhook posts signed LINE webhook requests to gateway-line.
type Webhook struct {
	URL    string
	Client *http.Client
}

// TextEvent is the body of a webhook with one text message from userID in a 1:1 chat.
func TextEvent(eventID, userID, replyToken, text string, at time.Time) []byte {
	return fakeline.Body(fakeline.TextEvent(eventID, userID, "", replyToken, text, at.UnixMilli(), false))
}

// Sign is X-Line-Signature: base64(HMAC-SHA256(channel secret, body)).
func Sign(body []byte) string { return fakeline.Sign(LineSecret, body) }

// Post sends one signed webhook request (signing is part of the caller's, not the server's,
// time: sig is computed beforehand) and returns the status.
func (h Webhook) Post(body []byte, sig string) (int, error) {
	req, err := http.NewRequest(http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("X-Line-Signature", sig)
	res, err := h.Client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}
