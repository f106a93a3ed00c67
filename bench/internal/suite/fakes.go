package suite

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
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
	observe func(fakeline.Sent)
	// Replies counts accepted replies; Unawaited those nobody waited for; Pushes the pushes.
	Replies, Unawaited, Pushes atomic.Int64
}

// NewLineAPI starts the fake over HTTPS with HTTP/2, as api.line.me answers. The suite trusts
// its certificate through CAEnv.
func NewLineAPI() *LineAPI { return newLineAPI(true) }

// NewLineAPIHTTP1 is NewLineAPI over HTTP/1.1 (still HTTPS), for runs that drop connections
// (fakeline.Fault's Reset).
func NewLineAPIHTTP1() *LineAPI { return newLineAPI(false) }

func newLineAPI(http2 bool) *LineAPI {
	l := &LineAPI{Server: fakeline.NewTLSServer(LineToken, http2), waiters: map[string]chan Reply{}}
	l.OnSent(l.sent)
	return l
}

// CAEnv is the environment that makes a suite process trust the fake's certificate:
// SSL_CERT_FILE naming a file in dir that holds it (Go reads it instead of the system's bundle).
func (l *LineAPI) CAEnv(dir string) ([]string, error) {
	path := filepath.Join(dir, "fake-line-ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: l.Certificate().Raw})
	if err := os.WriteFile(path, cert, 0o644); err != nil {
		return nil, fmt.Errorf("fake LINE API certificate: %w", err)
	}
	return []string{"SSL_CERT_FILE=" + path}, nil
}

// Observe calls f with every reply and push accepted from now on (as with OnSent, f must not
// call the server).
func (l *LineAPI) Observe(f func(fakeline.Sent)) {
	l.mu.Lock()
	l.observe = f
	l.mu.Unlock()
}

func (l *LineAPI) sent(s fakeline.Sent) {
	l.mu.Lock()
	observe := l.observe
	l.mu.Unlock()
	if observe != nil {
		observe(s)
	}
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

// ChatAnswer is the fake Ollama's chat answer; to a marked message it is Marked(ChatAnswer, n).
const ChatAnswer = "了解です。ほかに何かあれば気軽にどうぞ。"

// Ollama is the shared Ollama fake (pkg/testinfra/fakellm) with zero model latency: JSON-mode
// calls (the router's classifier) get a confident CHAT classification, other calls a short
// chat answer that repeats the number of the latest user message (see Marked). It counts calls
// and keeps no request.
type Ollama = fakellm.Server

// NewOllama starts the fake; models are the names /api/tags lists. Every call takes
// *latency (zero: answered at once), which the load tool may change between phases.
func NewOllama(latency *atomic.Int64, models ...string) *Ollama {
	return fakellm.New(fakellm.Ollama, func(r fakellm.Request) fakellm.Answer {
		delay := time.Duration(latency.Load())
		if r.JSON {
			return fakellm.Answer{Delay: delay, Content: `{"route":"CHAT","confidence":0.95,"reason":"small talk","evidence":[]}`}
		}
		answer := ChatAnswer
		if n, ok := lastUserMarker(r.Messages); ok {
			answer = Marked(answer, n)
		}
		return fakellm.Answer{Delay: delay, Content: answer}
	}, fakellm.WithModels(models...), fakellm.CountOnly())
}

// lastUserMarker is the message number in the latest user message of a prompt.
func lastUserMarker(msgs []fakellm.Message) (int, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return Marker(msgs[i].Content)
		}
	}
	return 0, false
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
