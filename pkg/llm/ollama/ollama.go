// Package ollama is the client for a local Ollama server (/api/chat, /api/tags, /api/show),
// with the health check the chat and worker agents run at start-up, the restart that a failed
// call triggers (Restarter, Guard), and the model management API (/api/pull, /api/create) and
// Modelfile parser behind `picoclaw models setup`.
package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// Client is the client for a local Ollama server.
type Client struct {
	cfg  llm.Config
	call *llm.Runner
}

var _ llm.Client = (*Client)(nil)

// New builds an Ollama client (cfg.Provider is set to ollama) after filling defaults and
// validating.
func New(cfg llm.Config, opts ...llm.Option) (*Client, error) {
	cfg.Provider = llm.ProviderOllama
	r, err := llm.NewRunner(cfg, opts...)
	if err != nil {
		return nil, err
	}
	return &Client{cfg: r.Config(), call: r}, nil
}

// NewLocal builds the client for a local provider: Ollama, or the offline provider. Services
// whose model must stay on the machine (the chat agent) use it instead of the provider factory,
// so no cloud SDK is linked into them.
func NewLocal(cfg llm.Config, opts ...llm.Option) (llm.Client, error) {
	if strings.EqualFold(strings.TrimSpace(cfg.Provider), llm.ProviderOllama) {
		c, err := New(cfg, opts...)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	r, err := llm.NewRunner(cfg, opts...)
	if err != nil {
		return nil, err
	}
	if p := r.Config().Provider; p != llm.ProviderOffline {
		return nil, fmt.Errorf("llm: provider %q is not local (ollama or offline)", p)
	}
	return llm.NewOffline(), nil
}

// Provider implements llm.Client.
func (c *Client) Provider() string { return llm.ProviderOllama }

// Model implements llm.Client.
func (c *Client) Model() string { return c.cfg.Model }

// Cloud implements llm.Client: Ollama runs on this machine.
func (c *Client) Cloud() bool { return false }

// The /api/chat shapes of github.com/ollama/ollama/api (ChatRequest, Message, ToolCall, Tool).
type ollamaMessage struct {
	Role       string           `json:"role"`
	Content    string           `json:"content"`
	ToolCalls  []ollamaToolCall `json:"tool_calls,omitempty"`
	ToolName   string           `json:"tool_name,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
	// Images are api.Message.Images ([]api.ImageData: raw bytes, base64 in JSON).
	Images [][]byte `json:"images,omitempty"`
}

type ollamaToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int            `json:"index"`
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"function"`
}

type ollamaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"function"`
}

type ollamaChatRequest struct {
	Model     string          `json:"model"`
	Messages  []ollamaMessage `json:"messages"`
	Stream    bool            `json:"stream"`
	KeepAlive any             `json:"keep_alive"`
	Format    string          `json:"format,omitempty"`
	Tools     []ollamaTool    `json:"tools,omitempty"`
	Options   map[string]any  `json:"options"`
}

type ollamaChatResponse struct {
	Model           string         `json:"model"`
	Message         *ollamaMessage `json:"message"`
	Done            bool           `json:"done"`
	PromptEvalCount int64          `json:"prompt_eval_count"`
	EvalCount       int64          `json:"eval_count"`
	Error           string         `json:"error"`
}

// Chat implements llm.Client with one non-streaming /api/chat call per attempt.
func (c *Client) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return c.call.Run(ctx, req, c.attempt)
}

func (c *Client) attempt(ctx context.Context, req llm.Request) (llm.Answer, error) {
	body := ollamaChatRequest{
		Model:     c.cfg.Model,
		Stream:    false,
		KeepAlive: c.cfg.OllamaKeepAlive(),
		Options:   map[string]any{"num_ctx": c.cfg.NumCtx},
	}
	if req.MaxTokens > 0 {
		body.Options["num_predict"] = req.MaxTokens
	}
	// Ollama has no tool choice: an answer without calls is asked for by offering none.
	if req.ToolChoice != llm.ToolChoiceNone {
		for _, t := range req.Tools {
			var ot ollamaTool
			ot.Type = "function"
			ot.Function.Name, ot.Function.Description, ot.Function.Parameters = t.Name, t.Description, t.Parameters
			body.Tools = append(body.Tools, ot)
		}
	}
	// format "json" keeps a model from emitting the tokens of a tool call, so it is left out
	// while tools are offered (the prompt still asks for JSON).
	if req.JSON && len(body.Tools) == 0 {
		body.Format = "json"
	}
	for _, m := range req.Messages {
		om := ollamaMessage{Role: string(m.Role), Content: m.Content}
		for _, img := range m.Images {
			om.Images = append(om.Images, img.Data)
		}
		if m.Role == llm.RoleTool {
			om.ToolName, om.ToolCallID = m.ToolName, m.ToolCallID
		}
		for i, tc := range m.ToolCalls {
			var otc ollamaToolCall
			otc.ID = tc.ID
			otc.Function.Index, otc.Function.Name = i, tc.Name
			if err := json.Unmarshal([]byte(tc.Arguments), &otc.Function.Arguments); err != nil || otc.Function.Arguments == nil {
				otc.Function.Arguments = map[string]any{}
			}
			om.ToolCalls = append(om.ToolCalls, otc)
		}
		body.Messages = append(body.Messages, om)
	}
	var out ollamaChatResponse
	if err := c.post(ctx, "/api/chat", body, &out); err != nil {
		if llm.StatusCode(err) == http.StatusNotFound {
			// Ollama's 404 on /api/chat is `model "x" not found, try pulling it first`.
			return llm.Answer{}, fmt.Errorf("%w: model %q is not installed (%s): %w", llm.ErrModelUnavailable, c.cfg.Model, SetupCommand, err)
		}
		return llm.Answer{}, err
	}
	if out.Message == nil || !out.Done {
		return llm.Answer{}, llm.BadResponse("ollama /api/chat: no message or not done")
	}
	ans := llm.Answer{Text: out.Message.Content, Usage: llm.Usage{InputTokens: out.PromptEvalCount, OutputTokens: out.EvalCount}}
	if req.JSON && body.Format == "" {
		ans.Text = llm.StripFence(ans.Text)
	}
	for _, tc := range out.Message.ToolCalls {
		args, err := json.Marshal(tc.Function.Arguments)
		if err != nil || tc.Function.Arguments == nil {
			args = []byte("{}")
		}
		ans.ToolCalls = append(ans.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: string(args)})
	}
	if ans.Usage.InputTokens == 0 && ans.Usage.OutputTokens == 0 {
		ans.Usage = llm.Usage{InputTokens: llm.EstimateTokens(req.Messages), OutputTokens: llm.EstimateText(ans.Text)}
	}
	return ans, nil
}

func (c *Client) post(ctx context.Context, path string, in, out any) error {
	return llm.PostJSON(ctx, c.call.HTTPClient(), strings.TrimRight(c.cfg.BaseURL, "/")+path, nil, in, out, ollamaError)
}

func (c *Client) do(hreq *http.Request, out any) error {
	return llm.DoJSON(c.call.HTTPClient(), hreq, out, ollamaError)
}

// ollamaError is the message of an Ollama error body ({"error": "..."}).
func ollamaError(raw []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	return e.Error
}

// Health is the result of an Ollama health check.
type Health struct {
	// ModelPresent: /api/tags lists the model.
	ModelPresent bool
	// ContextLength is the model's trained context length from /api/show model_info.
	ContextLength int
	// ModelNumCtx is the num_ctx the model file sets (0 when unset).
	ModelNumCtx int
	// NumCtx is the num_ctx this client sends.
	NumCtx int
}

// Health checks that the server answers, the model is present, and that the context lengths
// fit: the num_ctx sent and any num_ctx set in the model file are within max_context, and the
// num_ctx sent does not exceed what the model was trained for. A failed check wraps
// ErrModelUnavailable (or the transport error class).
func (c *Client) Health(ctx context.Context) (Health, error) {
	h := Health{NumCtx: c.cfg.NumCtx}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(c.cfg.TimeoutSec)*time.Second)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.cfg.BaseURL, "/")+"/api/tags", nil)
	if err != nil {
		return h, err
	}
	var tags struct {
		Models []struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	if err := c.do(hreq, &tags); err != nil {
		return h, fmt.Errorf("ollama health: %w: %w", llm.ErrUnavailable, err)
	}
	for _, m := range tags.Models {
		if sameModel(m.Name, c.cfg.Model) || sameModel(m.Model, c.cfg.Model) {
			h.ModelPresent = true
		}
	}
	if !h.ModelPresent {
		return h, fmt.Errorf("ollama health: %w: model %q is not installed (ollama pull / ollama create)", llm.ErrModelUnavailable, c.cfg.Model)
	}
	var show struct {
		Parameters string         `json:"parameters"`
		ModelInfo  map[string]any `json:"model_info"`
	}
	if err := c.post(ctx, "/api/show", map[string]string{"model": c.cfg.Model}, &show); err != nil {
		return h, fmt.Errorf("ollama health: /api/show: %w: %w", llm.ErrUnavailable, err)
	}
	for k, v := range show.ModelInfo {
		if strings.HasSuffix(k, ".context_length") {
			if f, ok := v.(float64); ok {
				h.ContextLength = int(f)
			}
		}
	}
	for _, line := range strings.Split(show.Parameters, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "num_ctx" {
			h.ModelNumCtx, _ = strconv.Atoi(f[1])
		}
	}
	switch {
	case c.cfg.MaxContext > 0 && c.cfg.NumCtx > c.cfg.MaxContext:
		return h, fmt.Errorf("ollama health: %w: num_ctx %d exceeds max_context %d", llm.ErrModelUnavailable, c.cfg.NumCtx, c.cfg.MaxContext)
	case c.cfg.MaxContext > 0 && h.ModelNumCtx > c.cfg.MaxContext:
		return h, fmt.Errorf("ollama health: %w: model %q sets num_ctx %d, above max_context %d", llm.ErrModelUnavailable, c.cfg.Model, h.ModelNumCtx, c.cfg.MaxContext)
	case h.ContextLength > 0 && c.cfg.NumCtx > h.ContextLength:
		return h, fmt.Errorf("ollama health: %w: num_ctx %d exceeds the context length %d of model %q", llm.ErrModelUnavailable, c.cfg.NumCtx, h.ContextLength, c.cfg.Model)
	}
	return h, nil
}

// sameModel compares model names, treating a missing tag as :latest.
func sameModel(a, b string) bool {
	norm := func(s string) string {
		if !strings.Contains(s, ":") {
			return s + ":latest"
		}
		return s
	}
	return a != "" && norm(a) == norm(b)
}

// ErrNoRestartCommand is returned by Restart when restart_command is empty.
var ErrNoRestartCommand = errors.New("llm: ollama restart_command not configured")

// Restart runs restart_command as an argument vector (never through a shell) and returns its
// combined output on failure.
func (c *Client) Restart(ctx context.Context) error {
	if len(c.cfg.RestartCommand) == 0 {
		return ErrNoRestartCommand
	}
	return runRestart(ctx, c.cfg.RestartCommand)
}

// EnsureHealthy runs Health and, when it fails and a restart command is configured, restarts
// Ollama once and checks again after settle.
func (c *Client) EnsureHealthy(ctx context.Context, settle time.Duration) (Health, error) {
	h, err := c.Health(ctx)
	if err == nil || len(c.cfg.RestartCommand) == 0 {
		return h, err
	}
	c.call.Logger().WarnContext(ctx, "llm.ollama_restart", "reason", err.Error())
	if rerr := c.Restart(ctx); rerr != nil {
		return h, errors.Join(err, rerr)
	}
	if err := c.call.Sleep(ctx, settle); err != nil {
		return h, err
	}
	return c.Health(ctx)
}
