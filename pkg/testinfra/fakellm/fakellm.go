// Package fakellm is the suite's one set of local model servers for tests and the load tool,
// each speaking its provider's wire protocol as the published types define it: Ollama's
// /api/chat, /api/tags, /api/show, /api/pull, /api/create and /api/version
// (github.com/ollama/ollama/api), OpenAI's
// Chat Completions (/v1/chat/completions, also DeepSeek's) and Anthropic's Messages
// (/v1/messages). A test scripts the answers with an Answerer and reads back every request.
package fakellm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/internal/locked"
)

// Provider names.
const (
	Ollama    = "ollama"
	OpenAI    = "openai"
	Anthropic = "anthropic"
)

// Message is one chat message of a request.
type Message struct {
	Role string
	// Content is the text of the message, the content of its tool results included.
	Content string
	// Images are the message's pictures, base64 as the wire carries them: Ollama's images,
	// the data of OpenAI's image_url data URLs and of Anthropic's base64 image blocks.
	Images []string
	// ImageTypes are the media types the wire named for Images, in order (OpenAI's data URL
	// type, Anthropic's media_type; Ollama names none).
	ImageTypes []string
	// ToolCalls are the calls of an assistant message.
	ToolCalls []ToolCall
	// ToolResults are the results the message carries (one for a role tool message, the
	// tool_result blocks of an Anthropic user turn).
	ToolResults []ToolResult
}

// Request is one model call as the server received it, provider-neutral.
type Request struct {
	Provider string
	Model    string
	// System is the system prompt (Anthropic's system field, or the leading system message).
	System   string
	Messages []Message
	// JSON is a call for a JSON answer (Ollama format, OpenAI response_format).
	JSON   bool
	Stream bool
	// Tools are the tools offered; ToolChoice is the tool choice sent ("" when none was:
	// OpenAI "auto", "none", "required"; Anthropic's type "auto", "any", "tool", "none").
	Tools      []Tool
	ToolChoice string
	// Options are Ollama's options (num_ctx, temperature, ...); KeepAlive its keep_alive.
	Options   map[string]any
	KeepAlive any
	Header    http.Header
	Raw       []byte
}

// Text is all message contents joined, for matching on what the prompt says.
func (r Request) Text() string {
	var b strings.Builder
	b.WriteString(r.System)
	for _, m := range r.Messages {
		b.WriteString("\n")
		b.WriteString(m.Content)
	}
	return b.String()
}

// Answer is what the server does with one request: answer Content (and ToolCalls) after
// Delay, or fail with Status (and ErrorType/ErrorMessage in the provider's error body), or Hang
// until the client gives up.
type Answer struct {
	Content string
	// ToolCalls are the calls the model asks for, written in the provider's shape (OpenAI
	// tool_calls with finish_reason tool_calls, Anthropic tool_use blocks with stop_reason
	// tool_use, Ollama message.tool_calls).
	ToolCalls        []ToolCall
	Delay            time.Duration
	Status           int
	ErrorType        string
	ErrorCode        string
	ErrorMessage     string
	Hang             bool
	PromptTokens     int
	CompletionTokens int
}

// Answerer decides the answer to a request.
type Answerer func(Request) Answer

// Reply answers every request with content.
func Reply(content string) Answerer { return func(Request) Answer { return Answer{Content: content} } }

// Script answers the requests in order; the last answer repeats.
func Script(answers ...Answer) Answerer {
	var mu sync.Mutex
	n := 0
	return func(Request) Answer {
		mu.Lock()
		defer mu.Unlock()
		a := answers[min(n, len(answers)-1)]
		n++
		return a
	}
}

// Server is one fake provider.
type Server struct {
	*httptest.Server
	provider  string
	apiKey    string
	answer    Answerer
	ctxLen    int
	params    string
	countOnly bool
	ol        ollamaState

	mu                    sync.Mutex
	requests              []Request
	calls                 int
	problems              []string
	inflight, maxInflight int
}

// Option configures a server.
type Option func(*Server)

// WithAPIKey makes the server refuse calls without this key (Authorization: Bearer for
// OpenAI, x-api-key for Anthropic) the way the provider does.
func WithAPIKey(key string) Option { return func(s *Server) { s.apiKey = key } }

// WithModels are the models Ollama's /api/tags lists (default: every name is present). With
// no names the server starts with no models at all, as a fresh Ollama does.
func WithModels(names ...string) Option {
	return func(s *Server) { s.ol.restricted, s.ol.names = true, append([]string(nil), names...) }
}

// WithRestartFile is the file a restart command creates (e.g. ["touch", path]) to "restart"
// the fake Ollama: at its next request the fake counts a restart, removes the file, and ends
// what MissingUntilRestart and DownUntilRestart began.
func WithRestartFile(path string) Option { return func(s *Server) { s.ol.restartFile = path } }

// WithPullError makes every /api/pull fail with msg in the stream, as Ollama reports a registry
// failure (e.g. "pull model manifest: file does not exist").
func WithPullError(msg string) Option { return func(s *Server) { s.ol.pullErr = msg } }

// WithContextLength is the context length /api/show reports (default 32768).
func WithContextLength(n int) Option { return func(s *Server) { s.ctxLen = n } }

// WithParameters is the model file's parameters /api/show reports, one "name value" a line as
// Ollama prints them (e.g. "num_ctx 8192"; default: none).
func WithParameters(p string) Option { return func(s *Server) { s.params = p } }

// CountOnly keeps no request, only their number: for load tests, where recording would
// grow without bound and cost the machine being measured.
func CountOnly() Option { return func(s *Server) { s.countOnly = true } }

// New starts a fake of provider (Ollama, OpenAI or Anthropic). Close it when done (Start
// does that for a test).
func New(provider string, answer Answerer, opts ...Option) *Server {
	s := &Server{provider: provider, answer: answer, ctxLen: 32768}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	var handler http.Handler = mux
	switch provider {
	case Ollama:
		mux.HandleFunc("POST /api/chat", s.ollamaChat)
		mux.HandleFunc("GET /api/tags", s.ollamaTags)
		mux.HandleFunc("POST /api/show", s.ollamaShow)
		mux.HandleFunc("POST /api/pull", s.ollamaPull)
		mux.HandleFunc("POST /api/create", s.ollamaCreate)
		handler = s.ollamaGate(mux)
		mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, map[string]any{"version": "0.12.0"})
		})
	case OpenAI:
		mux.HandleFunc("POST /v1/chat/completions", s.openAIChat)
		mux.HandleFunc("POST /chat/completions", s.openAIChat) // base URLs without /v1 (DeepSeek)
	case Anthropic:
		mux.HandleFunc("POST /v1/messages", s.anthropicMessages)
	default:
		panic("fakellm: unknown provider " + provider)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.problem("unexpected %s call %s %s", provider, r.Method, r.URL.Path)
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "not found"})
	})
	s.Server = httptest.NewServer(handler)
	return s
}

// TB is the part of testing.TB Start needs.
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
}

// Start is New for a test: the server closes at cleanup, and a call the fake could not
// understand (a malformed request, an unknown path) fails the test.
func Start(t TB, provider string, answer Answerer, opts ...Option) *Server {
	t.Helper()
	s := New(provider, answer, opts...)
	t.Cleanup(func() {
		s.Close()
		for _, p := range s.Problems() {
			t.Errorf("fake %s: %s", provider, p)
		}
	})
	return s
}

// Requests are the requests received so far.
func (s *Server) Requests() []Request {
	return locked.Copy(&s.mu, &s.requests)
}

// Calls is the number of model calls received.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// MaxInFlight is the most calls served at the same time.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInflight
}

// Problems are the calls the fake could not understand.
func (s *Server) Problems() []string {
	return locked.Copy(&s.mu, &s.problems)
}

func (s *Server) problem(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

// serve records req, asks the answerer and waits as it says. ok is false when the answer
// is a hang or the client went away (nothing more is written).
func (s *Server) serve(r *http.Request, req Request) (Answer, bool) {
	s.mu.Lock()
	s.calls++
	if !s.countOnly {
		s.requests = append(s.requests, req)
	}
	s.inflight++
	s.maxInflight = max(s.maxInflight, s.inflight)
	s.mu.Unlock()
	defer func() { s.mu.Lock(); s.inflight--; s.mu.Unlock() }()
	a := s.answer(req)
	wait := a.Delay
	if a.Hang {
		wait = 10 * time.Minute
	}
	if wait > 0 {
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return a, false
		}
	}
	return a, !a.Hang
}

func readBody(w http.ResponseWriter, r *http.Request, s *Server, dst any) ([]byte, bool) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err == nil {
		err = json.Unmarshal(raw, dst)
	}
	if err != nil {
		s.problem("%s %s: malformed body: %v", r.Method, r.URL.Path, err)
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid request body"})
		return nil, false
	}
	return raw, true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// tokens estimates a token count (4 bytes a token) when the answer gives none.
func tokens(given int, text string) int {
	if given > 0 {
		return given
	}
	return max(1, len(text)/4)
}
