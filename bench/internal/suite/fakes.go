package suite

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
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

// Ollama is the shared Ollama fake (pkg/testinfra/fakellm) with zero model latency: JSON-mode
// calls (the router's classifier) get a confident CHAT classification, other calls a short
// chat answer. It counts calls and keeps no request.
type Ollama = fakellm.Server

// NewOllama starts the fake; models are the names /api/tags lists.
func NewOllama(models ...string) *Ollama {
	return fakellm.New(fakellm.Ollama, func(r fakellm.Request) fakellm.Answer {
		if r.JSON {
			return fakellm.Answer{Content: `{"route":"CHAT","confidence":0.95,"reason":"small talk","evidence":[]}`}
		}
		return fakellm.Answer{Content: "了解です。ほかに何かあれば気軽にどうぞ。"}
	}, fakellm.WithModels(models...), fakellm.CountOnly())
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
