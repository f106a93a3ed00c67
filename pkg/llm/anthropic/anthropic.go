// Package anthropic is the client for the Anthropic Messages API (POST {base_url}/v1/messages),
// spoken directly as the API reference defines it. Only composition roots that may call a cloud
// model import it.
package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// apiVersion is the anthropic-version header the requests are written for.
const apiVersion = "2023-06-01"

// anthropicClient speaks the Messages API, built from our options only (no ANTHROPIC_*
// environment defaults); the retry policy is the runner's.
type anthropicClient struct {
	cfg    llm.Config
	url    string
	header http.Header
	call   *llm.Runner
}

// New builds the client for cfg (provider anthropic) after filling defaults and validating;
// the key comes from the environment variable named by api_key_env.
func New(cfg llm.Config, opts ...llm.Option) (llm.Client, error) {
	r, key, err := llm.NewCloudRunner(cfg, []string{llm.ProviderAnthropic}, opts...)
	if err != nil {
		return nil, err
	}
	cfg = r.Config()
	return &anthropicClient{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/v1/messages",
		header: http.Header{"X-Api-Key": {key}, "Anthropic-Version": {apiVersion}}, call: r}, nil
}

// The request and answer of POST /v1/messages, as far as we use them.
type (
	messagesRequest struct {
		Model      string      `json:"model"`
		MaxTokens  int         `json:"max_tokens"`
		System     []block     `json:"system,omitempty"`
		Messages   []turn      `json:"messages"`
		Tools      []tool      `json:"tools,omitempty"`
		ToolChoice *toolChoice `json:"tool_choice,omitempty"`
	}
	turn struct {
		Role    string  `json:"role"`
		Content []block `json:"content"`
	}
	// block is a content block: text, tool_use (an answer's call) or tool_result.
	block struct {
		Type      string          `json:"type"`
		Text      string          `json:"text,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
		Content   []block         `json:"content,omitempty"`
		IsError   bool            `json:"is_error,omitempty"`
		// Source is an image block's picture ({"type":"base64","media_type","data"}).
		Source *imageSource `json:"source,omitempty"`
	}
	imageSource struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	}
	tool struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		InputSchema map[string]any `json:"input_schema"`
	}
	toolChoice struct {
		Type string `json:"type"`
	}
	messagesAnswer struct {
		Type    string  `json:"type"`
		Content []block `json:"content"`
		Usage   struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
	}
)

func (c *anthropicClient) Provider() string { return llm.ProviderAnthropic }
func (c *anthropicClient) Model() string    { return c.cfg.Model }
func (c *anthropicClient) Cloud() bool      { return true }

func (c *anthropicClient) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return c.call.Run(ctx, req, c.attempt)
}

// jsonInstruction is appended to the system prompt when JSON is wanted, since the Messages
// API has no JSON mode.
const jsonInstruction = "Answer with a single JSON object only, no prose and no code fences."

func (c *anthropicClient) attempt(ctx context.Context, req llm.Request) (llm.Answer, error) {
	body := messagesRequest{Model: c.cfg.Model, MaxTokens: req.MaxTokens}
	var system []string
	for _, m := range req.Messages {
		if m.Role == llm.RoleSystem {
			system = append(system, m.Content)
			continue
		}
		body.Messages = appendMessage(body.Messages, m)
	}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: inputSchema(t.Parameters)})
	}
	if len(req.Tools) > 0 && req.ToolChoice == llm.ToolChoiceNone {
		body.ToolChoice = &toolChoice{Type: "none"}
	}
	if req.JSON {
		system = append(system, jsonInstruction)
	}
	if len(system) > 0 {
		body.System = []block{{Type: "text", Text: strings.Join(system, "\n\n")}}
	}
	var res messagesAnswer
	if err := llm.PostJSON(ctx, c.call.HTTPClient(), c.url, c.header, body, &res, errorText); err != nil {
		return llm.Answer{}, err
	}
	if res.Type != "message" {
		return llm.Answer{}, llm.BadResponse("anthropic: answer type %q is not a message", res.Type)
	}
	var ans llm.Answer
	var b strings.Builder
	for _, blk := range res.Content {
		switch blk.Type {
		case "text":
			b.WriteString(blk.Text)
		case "tool_use":
			args := string(blk.Input)
			if args == "" {
				args = "{}"
			}
			ans.ToolCalls = append(ans.ToolCalls, llm.ToolCall{ID: blk.ID, Name: blk.Name, Arguments: args})
		}
	}
	ans.Text = b.String()
	if req.JSON && len(ans.ToolCalls) == 0 {
		ans.Text = llm.StripFence(ans.Text)
	}
	ans.Usage = llm.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens}
	return ans, nil
}

// appendMessage adds m to msgs on the Messages wire: an assistant's tool calls are tool_use
// blocks after its text, and tool results are tool_result blocks of a user turn. Consecutive
// user-side messages share one turn, tool results first, as the API requires the results of
// an answer's calls in the turn right after it.
func appendMessage(msgs []turn, m llm.Message) []turn {
	var blocks []block
	role := string(llm.RoleUser)
	switch m.Role {
	case llm.RoleAssistant:
		role = string(llm.RoleAssistant)
		if m.Content != "" {
			blocks = append(blocks, block{Type: "text", Text: m.Content})
		}
		for _, tc := range m.ToolCalls {
			blocks = append(blocks, block{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: toolInput(tc.Arguments)})
		}
		if len(blocks) == 0 {
			blocks = append(blocks, block{Type: "text", Text: m.Content})
		}
	case llm.RoleTool:
		res := block{Type: "tool_result", ToolUseID: m.ToolCallID, IsError: m.ToolError}
		if m.Content != "" {
			res.Content = []block{{Type: "text", Text: m.Content}}
		}
		blocks = append(blocks, res)
	default:
		// Images first, then the text about them (the order the API documents).
		for _, img := range m.Images {
			blocks = append(blocks, block{Type: "image", Source: &imageSource{Type: "base64", MediaType: img.MIMEType,
				Data: base64.StdEncoding.EncodeToString(img.Data)}})
		}
		if m.Content != "" || len(m.Images) == 0 {
			blocks = append(blocks, block{Type: "text", Text: m.Content})
		}
	}
	if n := len(msgs); n > 0 && msgs[n-1].Role == role && role == string(llm.RoleUser) {
		last := &msgs[n-1]
		if m.Role == llm.RoleTool {
			// Results go before any text of the turn.
			i := 0
			for i < len(last.Content) && last.Content[i].Type == "tool_result" {
				i++
			}
			last.Content = append(last.Content[:i], append(blocks, last.Content[i:]...)...)
		} else {
			last.Content = append(last.Content, blocks...)
		}
		return msgs
	}
	return append(msgs, turn{Role: role, Content: blocks})
}

// toolInput is a call's arguments as the object tool_use.input must be.
func toolInput(args string) json.RawMessage {
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) != nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(args)
}

// inputSchema is a JSON object schema as input_schema: type object, properties (an empty
// object when none) and every other keyword kept as it is.
func inputSchema(p map[string]any) map[string]any {
	s := make(map[string]any, len(p)+2)
	for k, v := range p {
		s[k] = v
	}
	s["type"] = "object"
	if s["properties"] == nil {
		s["properties"] = map[string]any{}
	}
	if r := asStrings(s["required"]); r != nil {
		s["required"] = r
	} else {
		delete(s, "required")
	}
	return s
}

func asStrings(v any) []string {
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// errorText is the message of an error answer ({"type": "error", "error": {"type", "message"}}).
func errorText(raw []byte) string {
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	if e.Error.Type != "" && e.Error.Message != "" {
		return e.Error.Type + ": " + e.Error.Message
	}
	return e.Error.Message
}
