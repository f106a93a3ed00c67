package suite

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Reply is a reply the fake LINE API accepted.
type Reply struct {
	At   time.Time
	Text string
}

// LineAPI is a fake LINE Messaging API: it checks the channel access token, accepts replies,
// pushes and loading animations, and hands every reply to whoever awaits its reply token.
type LineAPI struct {
	*httptest.Server
	mu      sync.Mutex
	waiters map[string]chan Reply
	// Replies counts accepted replies; Unawaited those nobody waited for; Pushes and Loadings
	// the other calls.
	Replies, Unawaited, Pushes, Loadings atomic.Int64
}

// NewLineAPI starts the fake.
func NewLineAPI() *LineAPI {
	l := &LineAPI{waiters: map[string]chan Reply{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/bot/message/reply", l.reply)
	mux.HandleFunc("POST /v2/bot/message/push", func(w http.ResponseWriter, r *http.Request) {
		l.Pushes.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		writeJSON(w, http.StatusOK, `{"sentMessages":[{"id":"1","quoteToken":"q"}]}`)
	})
	mux.HandleFunc("POST /v2/bot/chat/loading/start", func(w http.ResponseWriter, r *http.Request) {
		l.Loadings.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		writeJSON(w, http.StatusAccepted, `{}`)
	})
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+LineToken {
			writeJSON(w, http.StatusUnauthorized, `{"message":"Authentication failed."}`)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	return l
}

// Await returns a channel that receives the reply to token; call it before sending the event.
func (l *LineAPI) Await(token string) <-chan Reply {
	ch := make(chan Reply, 1)
	l.mu.Lock()
	l.waiters[token] = ch
	l.mu.Unlock()
	return ch
}

// Forget drops a waiter whose reply will not be awaited any more.
func (l *LineAPI) Forget(token string) {
	l.mu.Lock()
	delete(l.waiters, token)
	l.mu.Unlock()
}

func (l *LineAPI) reply(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	var b struct {
		ReplyToken string `json:"replyToken"`
		Messages   []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil || b.ReplyToken == "" || len(b.Messages) == 0 || len(b.Messages) > 5 {
		writeJSON(w, http.StatusBadRequest, `{"message":"The request body has 1 error(s)"}`)
		return
	}
	l.Replies.Add(1)
	l.mu.Lock()
	ch, ok := l.waiters[b.ReplyToken]
	delete(l.waiters, b.ReplyToken)
	l.mu.Unlock()
	if ok {
		ch <- Reply{At: at, Text: b.Messages[0].Text}
	} else {
		l.Unawaited.Add(1)
	}
	writeJSON(w, http.StatusOK, `{"sentMessages":[{"id":"1","quoteToken":"q"}]}`)
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
	ev := map[string]any{
		"type": "message", "mode": "active", "timestamp": at.UnixMilli(), "webhookEventId": eventID,
		"deliveryContext": map[string]any{"isRedelivery": false},
		"source":          map[string]any{"type": "user", "userId": userID}, "replyToken": replyToken,
		"message": map[string]any{"id": "m" + eventID, "type": "text", "text": text, "quoteToken": "q" + eventID},
	}
	b, _ := json.Marshal(map[string]any{"destination": "U0123456789abcdef0123456789abcdef", "events": []any{ev}})
	return b
}

// Sign is X-Line-Signature: base64(HMAC-SHA256(channel secret, body)).
func Sign(body []byte) string {
	m := hmac.New(sha256.New, []byte(LineSecret))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

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
