// Package llm is the model layer shared by chat-mio, router-shiro and coder-order: one
// interface over Ollama, OpenAI-compatible (OpenAI, DeepSeek), Anthropic and the offline
// provider.
package llm

import (
	"context"
	"errors"
	"time"
)

// Role of a chat message.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one chat message.
type Message struct {
	Role    Role
	Content string
}

// Request is one model call.
type Request struct {
	Messages []Message
	// JSON asks for a JSON-only answer (Ollama format:"json", OpenAI response_format).
	JSON bool
	// MaxTokens caps the answer (0 = the provider config's default).
	MaxTokens int
	// Timeout bounds this call (0 = the provider config's timeout_sec).
	Timeout time.Duration
}

// Usage is token usage as reported by the provider (or estimated when it reports none).
type Usage struct {
	InputTokens  int64
	OutputTokens int64
}

// Response is a model answer.
type Response struct {
	Text     string
	Usage    Usage
	Latency  time.Duration
	Provider string
	Model    string
	// Attempts is how many HTTP attempts the call took (retries + 1).
	Attempts int
}

// Client is a configured model.
type Client interface {
	Chat(ctx context.Context, req Request) (*Response, error)
	// Provider is ollama, openai, deepseek, anthropic or offline.
	Provider() string
	Model() string
	// Cloud reports whether text sent to this client leaves the machine.
	Cloud() bool
}

// Error classes; adapters wrap them so callers can use errors.Is.
var (
	// ErrUnauthenticated: 401/403 — stop and tell the user, never retry.
	ErrUnauthenticated = errors.New("llm: unauthenticated")
	// ErrRateLimited: 429 / Anthropic 529 after retry_max retries.
	ErrRateLimited = errors.New("llm: rate limited")
	// ErrUnavailable: 5xx or network failure after retries.
	ErrUnavailable = errors.New("llm: provider unavailable")
	// ErrTimeout: the call's deadline passed.
	ErrTimeout = errors.New("llm: timeout")
	// ErrBadResponse: the provider answered with something that is not its protocol.
	ErrBadResponse = errors.New("llm: malformed response")
	// ErrLocalOnly: a cloud call was refused because the session is local_only.
	ErrLocalOnly = errors.New("llm: cloud call refused (local_only)")
)
