// Package anthropic is the client for the Anthropic Messages API through the official SDK.
// Only composition roots that may call a cloud model import it.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// anthropicClient speaks the Anthropic Messages API through the official SDK, built from our
// options only (no ANTHROPIC_* environment defaults, no SDK retries).
type anthropicClient struct {
	cfg  llm.Config
	svc  anthropic.MessageService
	call *llm.Runner
}

// New builds the client for cfg (provider anthropic) after filling defaults and validating;
// the key comes from the environment variable named by api_key_env.
func New(cfg llm.Config, opts ...llm.Option) (llm.Client, error) {
	r, key, err := llm.NewCloudRunner(cfg, []string{llm.ProviderAnthropic}, opts...)
	if err != nil {
		return nil, err
	}
	cfg = r.Config()
	svc := anthropic.NewMessageService(
		option.WithHTTPClient(r.HTTPClient()),
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(key),
		option.WithMaxRetries(0),
	)
	return &anthropicClient{cfg: cfg, svc: svc, call: r}, nil
}

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
	params := anthropic.MessageNewParams{Model: anthropic.Model(c.cfg.Model), MaxTokens: int64(req.MaxTokens)}
	var system []string
	for _, m := range req.Messages {
		if m.Role == llm.RoleSystem {
			system = append(system, m.Content)
			continue
		}
		params.Messages = appendMessage(params.Messages, m)
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name: t.Name, Description: anthropic.String(t.Description), InputSchema: inputSchema(t.Parameters),
		}})
	}
	if len(req.Tools) > 0 && req.ToolChoice == llm.ToolChoiceNone {
		params.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
	}
	if req.JSON {
		system = append(system, jsonInstruction)
	}
	if len(system) > 0 {
		params.System = []anthropic.TextBlockParam{{Text: strings.Join(system, "\n\n")}}
	}
	var st anthropicStatus
	res, err := c.svc.New(ctx, params, option.WithMiddleware(st.middleware))
	if err != nil {
		return llm.Answer{}, st.wrap(err)
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
			ans.ToolCalls = append(ans.ToolCalls, llm.ToolCall{ID: blk.ID, Name: blk.Name, Arguments: string(blk.Input)})
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
func appendMessage(msgs []anthropic.MessageParam, m llm.Message) []anthropic.MessageParam {
	var blocks []anthropic.ContentBlockParamUnion
	role := anthropic.MessageParamRoleUser
	switch m.Role {
	case llm.RoleAssistant:
		role = anthropic.MessageParamRoleAssistant
		if m.Content != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Content))
		}
		for _, tc := range m.ToolCalls {
			blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, toolInput(tc.Arguments), tc.Name))
		}
		if len(blocks) == 0 {
			blocks = append(blocks, anthropic.NewTextBlock(m.Content))
		}
	case llm.RoleTool:
		blocks = append(blocks, anthropic.NewToolResultBlock(m.ToolCallID, m.Content, m.ToolError))
	default:
		blocks = append(blocks, anthropic.NewTextBlock(m.Content))
	}
	if n := len(msgs); n > 0 && msgs[n-1].Role == role && role == anthropic.MessageParamRoleUser {
		last := &msgs[n-1]
		if m.Role == llm.RoleTool {
			// Results go before any text of the turn.
			i := 0
			for i < len(last.Content) && last.Content[i].OfToolResult != nil {
				i++
			}
			last.Content = append(last.Content[:i], append(blocks, last.Content[i:]...)...)
		} else {
			last.Content = append(last.Content, blocks...)
		}
		return msgs
	}
	return append(msgs, anthropic.MessageParam{Role: role, Content: blocks})
}

// toolInput is a call's arguments as the object tool_use.input must be.
func toolInput(args string) json.RawMessage {
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) != nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(args)
}

// inputSchema maps a JSON object schema to input_schema: properties and required in their
// fields, any other keyword kept as it is.
func inputSchema(p map[string]any) anthropic.ToolInputSchemaParam {
	s := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
	for k, v := range p {
		switch k {
		case "type":
		case "properties":
			s.Properties = v
		case "required":
			s.Required = asStrings(v)
		default:
			s.ExtraFields[k] = v
		}
	}
	if s.Properties == nil {
		s.Properties = map[string]any{}
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

// anthropicStatus is the call's HTTP status as the SDK middleware saw it.
type anthropicStatus struct{ llm.SDKStatus }

func (s *anthropicStatus) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	s.Saw(res)
	return res, err
}

func (s *anthropicStatus) wrap(err error) error {
	msg := ""
	if ae, ok := errors.AsType[*anthropic.Error](err); ok {
		msg = ae.Error()
	}
	return s.Wrap(msg, err)
}
