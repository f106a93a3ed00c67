// Package llm is the provider-neutral core of the model layer shared by chat-mio, router-shiro
// and coder-order: one interface over Ollama, OpenAI-compatible (OpenAI, DeepSeek), Anthropic
// and the offline provider, with the config, the call policy, metrics and the error classes.
// It links no provider SDK: the clients live in pkg/llm/ollama, pkg/llm/openai and
// pkg/llm/anthropic, and pkg/llm/providers picks one from a config (composition roots only).
//
// Build a client with providers.New(cfg) or a provider package's New (cfg from agents.<id>,
// orders.<id>, merged with the ollama section through Config.WithOllama). Every call goes through one retry policy: 401/403 fail at
// once with ErrUnauthenticated; 429 and 529 wait for Retry-After (or back off) and 5xx and
// timeouts back off, up to retry_max retries; the context's deadline always wins. Text bound
// for a cloud provider is masked with redact.ForCloud first, and Request.LocalOnly refuses
// cloud calls with ErrLocalOnly. Chat and worker agents call RequireLocal at start-up.
//
// JSON contracts: set Request.JSON and Request.Contract (ContractClassifier, ContractWorker,
// ContractProposal). Real models get the contract from the prompt; the offline provider builds
// a valid, clearly labelled answer from the last user message. Without Contract it infers one
// from the system prompt (DetectContract).
//
// Tools: Request.Tools offers ToolSpecs, Response.ToolCalls asks for calls, and assistant
// messages with ToolCalls and RoleTool messages carry them back on every provider's wire (the
// offline provider answers without tools). RunTools is the one bounded loop around them.
package llm

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Role of a chat message.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries the result of one tool call back to the model.
	RoleTool Role = "tool"
)

// Message is one chat message.
type Message struct {
	Role    Role
	Content string
	// ToolCalls, on an assistant message, are the tools the model asked for (Content may be
	// empty then).
	ToolCalls []ToolCall
	// ToolCallID and ToolName, on a RoleTool message, name the call whose result Content is.
	ToolCallID string
	ToolName   string
	// ToolError marks a RoleTool result that reports a failure (Anthropic's is_error).
	ToolError bool
	// Images, on a user message, are pictures for a vision model (Ollama's images, OpenAI's
	// image_url parts, Anthropic's image blocks). Every image sent must first be recorded in the
	// image audit log (chat-mio does so before it calls).
	Images []Image
}

// Image is one picture in a message.
type Image struct {
	Data []byte
	// MIMEType is image/jpeg, image/png, image/gif or image/webp.
	MIMEType string
}

// HasImages reports whether any message of req carries an image.
func (r Request) HasImages() bool {
	for _, m := range r.Messages {
		if len(m.Images) > 0 {
			return true
		}
	}
	return false
}

// Request is one model call.
type Request struct {
	Messages []Message
	// JSON asks for a JSON-only answer (Ollama format:"json", OpenAI response_format).
	JSON bool
	// MaxTokens caps the answer (0 = the provider config's default).
	MaxTokens int
	// Timeout bounds each attempt of this call (0 = the provider config's timeout_sec); the
	// context's deadline bounds the whole call including retries.
	Timeout time.Duration
	// Contract names the JSON contract the caller expects. Real models ignore it (the prompt
	// carries the contract); the offline provider uses it to build a valid answer. When empty
	// and JSON is set, the offline provider infers the contract from the system prompt
	// (see DetectContract).
	Contract Contract
	// LocalOnly refuses the call with ErrLocalOnly when the client is a cloud provider.
	LocalOnly bool
	// Tools are the tools the model may call; the answer's ToolCalls say which it wants run
	// (see RunTools). The offline provider never calls tools.
	Tools []ToolSpec
	// ToolChoice ToolChoiceNone keeps Tools declared (a conversation that holds tool calls
	// needs them on some wires) but asks for an answer without calls.
	ToolChoice ToolChoice
}

// Contract is a JSON answer shape of the suite.
type Contract string

const (
	// ContractText is free text (the default).
	ContractText Contract = ""
	// ContractClassifier is {"route","confidence","reason","evidence"} (SPEC §4).
	ContractClassifier Contract = "classifier"
	// ContractWorker is the worker output of SPEC §5.
	ContractWorker Contract = "worker"
	// ContractProposal is the coder proposal of SPEC §6.
	ContractProposal Contract = "proposal"
)

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
	// Offline is true when the answer came from the offline provider, not a model.
	Offline bool
	// ToolCalls are the tools the model asks to have run before it answers.
	ToolCalls []ToolCall
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
	// ErrRejected: the provider refused the request itself (other 4xx); retrying cannot help.
	ErrRejected = errors.New("llm: request rejected")
	// ErrNoAPIKey: the environment variable named by api_key_env is empty.
	ErrNoAPIKey = errors.New("llm: api key not set")
	// ErrModelUnavailable: the local model is missing or misconfigured (the Ollama health check,
	// or a call answered 404 model not found), or its server stayed down after a restart.
	// Retrying later does not help: someone has to act (see LocalModelError).
	ErrModelUnavailable = errors.New("llm: model unavailable")
	// ErrUnreachable joins ErrUnavailable when the server could not be reached at all
	// (connection refused or reset, no route), not when it answered 5xx.
	ErrUnreachable = errors.New("llm: provider unreachable")
)

// Retryable reports whether err is a class worth retrying at a higher level (rate limit,
// unavailable, timeout).
func Retryable(err error) bool {
	return errors.Is(err, ErrRateLimited) || errors.Is(err, ErrUnavailable) || errors.Is(err, ErrTimeout)
}

// Code is a stable short error code for err ("unauthenticated", "rate_limited",
// "unavailable", "timeout", "bad_response", "rejected", "local_only", "no_api_key", "model_unavailable",
// "canceled", or "error").
func Code(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrUnauthenticated):
		return "unauthenticated"
	case errors.Is(err, ErrRateLimited):
		return "rate_limited"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, ErrBadResponse):
		return "bad_response"
	case errors.Is(err, ErrRejected):
		return "rejected"
	case errors.Is(err, ErrLocalOnly):
		return "local_only"
	case errors.Is(err, ErrNoAPIKey):
		return "no_api_key"
	case errors.Is(err, ErrModelUnavailable):
		return "model_unavailable"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}

// StripFence removes a Markdown code fence around a JSON answer, for providers that cannot be
// held to JSON on the wire (Anthropic; Ollama while tools are offered).
func StripFence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") {
		return s
	}
	t = strings.TrimPrefix(t, "```")
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = t[i+1:]
	}
	t = strings.TrimSuffix(strings.TrimSpace(t), "```")
	return strings.TrimSpace(t)
}
