// Package openai is the client for OpenAI-compatible chat completions (OpenAI, DeepSeek): the
// Chat Completions wire (POST {base_url}/chat/completions) spoken directly, as the API
// reference defines it. Only composition roots that may call a cloud model import it.
package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// client speaks Chat Completions, built from our options only (no OPENAI_* environment
// defaults, no organisation or project headers); the retry policy is the runner's.
type client struct {
	cfg    llm.Config
	url    string
	header http.Header
	call   *llm.Runner
}

// New builds the client for cfg (provider openai or deepseek) after filling defaults and
// validating; the key comes from the environment variable named by api_key_env.
func New(cfg llm.Config, opts ...llm.Option) (llm.Client, error) {
	r, key, err := llm.NewCloudRunner(cfg, []string{llm.ProviderOpenAI, llm.ProviderDeepSeek}, opts...)
	if err != nil {
		return nil, err
	}
	cfg = r.Config()
	return &client{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions",
		header: http.Header{"Authorization": {"Bearer " + key}}, call: r}, nil
}

func (c *client) Provider() string { return c.cfg.Provider }
func (c *client) Model() string    { return c.cfg.Model }
func (c *client) Cloud() bool      { return true }

func (c *client) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return c.call.Run(ctx, req, c.attempt)
}

// The request and answer of POST /chat/completions, as far as we use them.
type (
	chatRequest struct {
		Model               string          `json:"model"`
		Messages            []message       `json:"messages"`
		Tools               []tool          `json:"tools,omitempty"`
		ToolChoice          string          `json:"tool_choice,omitempty"`
		MaxTokens           int             `json:"max_tokens,omitempty"`
		MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
		ResponseFormat      *responseFormat `json:"response_format,omitempty"`
	}
	responseFormat struct {
		Type string `json:"type"`
	}
	message struct {
		Role string `json:"role"`
		// Content is a string, or (a user message with images) a list of contentPart.
		Content    any        `json:"content,omitempty"`
		ToolCalls  []toolCall `json:"tool_calls,omitempty"`
		ToolCallID string     `json:"tool_call_id,omitempty"`
	}
	// contentPart is a ChatCompletionContentPart: {"type":"text","text"} or
	// {"type":"image_url","image_url":{"url":"data:<mime>;base64,<data>"}}.
	contentPart struct {
		Type     string    `json:"type"`
		Text     string    `json:"text,omitempty"`
		ImageURL *imageURL `json:"image_url,omitempty"`
	}
	imageURL struct {
		URL string `json:"url"`
	}
	toolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	tool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	function struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		Parameters  map[string]any `json:"parameters,omitempty"`
	}
	chatAnswer struct {
		Choices []struct {
			Message struct {
				Content   *string    `json:"content"`
				ToolCalls []toolCall `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
)

func (c *client) attempt(ctx context.Context, req llm.Request) (llm.Answer, error) {
	body := chatRequest{Model: c.cfg.Model}
	for _, m := range req.Messages {
		body.Messages = append(body.Messages, wireMessage(m))
	}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, tool{Type: "function", Function: function{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	if len(req.Tools) > 0 && req.ToolChoice == llm.ToolChoiceNone {
		body.ToolChoice = "none"
	}
	if req.MaxTokens > 0 {
		// OpenAI deprecates max_tokens for max_completion_tokens (its o-series models refuse
		// max_tokens); DeepSeek's API documents max_tokens only.
		if c.cfg.Provider == llm.ProviderDeepSeek {
			body.MaxTokens = req.MaxTokens
		} else {
			body.MaxCompletionTokens = req.MaxTokens
		}
	}
	if req.JSON {
		body.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	var res chatAnswer
	if err := llm.PostJSON(ctx, c.call.HTTPClient(), c.url, c.header, body, &res, errorText); err != nil {
		return llm.Answer{}, err
	}
	if len(res.Choices) == 0 {
		return llm.Answer{}, llm.BadResponse("%s: no choices in the answer", c.cfg.Provider)
	}
	msg := res.Choices[0].Message
	ans := llm.Answer{Usage: llm.Usage{InputTokens: res.Usage.PromptTokens, OutputTokens: res.Usage.CompletionTokens}}
	if msg.Content != nil {
		ans.Text = *msg.Content
	}
	for _, tc := range msg.ToolCalls {
		if tc.Type != "function" {
			return llm.Answer{}, llm.BadResponse("%s: tool call of type %q, only function tools are offered", c.cfg.Provider, tc.Type)
		}
		ans.ToolCalls = append(ans.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if ans.Usage.InputTokens == 0 && ans.Usage.OutputTokens == 0 {
		ans.Usage = llm.Usage{InputTokens: llm.EstimateTokens(req.Messages), OutputTokens: llm.EstimateText(ans.Text)}
	}
	return ans, nil
}

// wireMessage is m on the Chat Completions wire: an assistant's tool calls go in tool_calls
// (its content left out when empty) and a tool result is a role tool message naming its call.
func wireMessage(m llm.Message) message {
	content := m.Content
	out := message{Role: string(m.Role), Content: &content}
	switch m.Role {
	case llm.RoleSystem, llm.RoleAssistant:
	case llm.RoleTool:
		out.ToolCallID = m.ToolCallID
	default:
		out.Role = string(llm.RoleUser)
		if len(m.Images) > 0 {
			parts := make([]contentPart, 0, len(m.Images)+1)
			if m.Content != "" {
				parts = append(parts, contentPart{Type: "text", Text: m.Content})
			}
			for _, img := range m.Images {
				parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{
					URL: "data:" + img.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)}})
			}
			out.Content = parts
		}
	}
	if m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0 {
		if m.Content == "" {
			out.Content = nil
		}
		for _, tc := range m.ToolCalls {
			w := toolCall{ID: tc.ID, Type: "function"}
			w.Function.Name, w.Function.Arguments = tc.Name, tc.Arguments
			out.ToolCalls = append(out.ToolCalls, w)
		}
	}
	return out
}

// errorText is the message of an error answer ({"error": {"message": ...}}).
func errorText(raw []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	return e.Error.Message
}
