// Package ollama is the client for a local Ollama server (/api/chat), with the model check
// every service runs at start-up for its local models (Check, CheckAtStart: /api/tags,
// /api/show), the restart that a failed call triggers (Restarter, Guard), and the model
// management API (/api/pull, /api/create) and Modelfile parser behind `picoclaw models setup`.
package ollama

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

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
	body.Messages = make([]ollamaMessage, 0, len(req.Messages))
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

// ollamaError is the message of an Ollama error body ({"error": "..."}).
func ollamaError(raw []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	return e.Error
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
