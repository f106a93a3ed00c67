// Package openai is the client for OpenAI-compatible chat completions (OpenAI, DeepSeek)
// through the official SDK. Only composition roots that may call a cloud model import it.
package openai

import (
	"context"
	"errors"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// openAIClient speaks OpenAI-compatible chat completions (OpenAI, DeepSeek) through the
// official SDK. The SDK's environment defaults (OPENAI_BASE_URL, OPENAI_API_KEY, org and
// project headers) and its own retries are bypassed: the service is built from our options
// only, and the retry policy is ours.
type openAIClient struct {
	cfg  llm.Config
	svc  openai.ChatCompletionService
	call *llm.Runner
}

// New builds the client for cfg (provider openai or deepseek) after filling defaults and
// validating; the key comes from the environment variable named by api_key_env.
func New(cfg llm.Config, opts ...llm.Option) (llm.Client, error) {
	r, key, err := llm.NewCloudRunner(cfg, []string{llm.ProviderOpenAI, llm.ProviderDeepSeek}, opts...)
	if err != nil {
		return nil, err
	}
	cfg = r.Config()
	svc := openai.NewChatCompletionService(
		option.WithHTTPClient(r.HTTPClient()),
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(key),
		option.WithMaxRetries(0),
	)
	return &openAIClient{cfg: cfg, svc: svc, call: r}, nil
}

func (c *openAIClient) Provider() string { return c.cfg.Provider }
func (c *openAIClient) Model() string    { return c.cfg.Model }
func (c *openAIClient) Cloud() bool      { return true }

func (c *openAIClient) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return c.call.Run(ctx, req, c.attempt)
}

func (c *openAIClient) attempt(ctx context.Context, req llm.Request) (llm.Answer, error) {
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(c.cfg.Model)}
	for _, m := range req.Messages {
		params.Messages = append(params.Messages, message(m))
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: shared.FunctionParameters(t.Parameters),
		}))
	}
	if len(req.Tools) > 0 && req.ToolChoice == llm.ToolChoiceNone {
		params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
	}
	if req.MaxTokens > 0 {
		// OpenAI deprecates max_tokens for max_completion_tokens (its o-series models refuse
		// max_tokens); DeepSeek's API documents max_tokens only.
		if c.cfg.Provider == llm.ProviderDeepSeek {
			params.MaxTokens = openai.Int(int64(req.MaxTokens))
		} else {
			params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.JSON {
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	}
	var st httpStatus
	res, err := c.svc.New(ctx, params, option.WithMiddleware(st.middleware))
	if err != nil {
		return llm.Answer{}, st.wrap(err)
	}
	if len(res.Choices) == 0 {
		return llm.Answer{}, llm.BadResponse("%s: no choices in the answer", c.cfg.Provider)
	}
	msg := res.Choices[0].Message
	ans := llm.Answer{Text: msg.Content, Usage: llm.Usage{InputTokens: res.Usage.PromptTokens, OutputTokens: res.Usage.CompletionTokens}}
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

// message is m on the Chat Completions wire: an assistant's tool calls go in tool_calls and a
// tool result is a role tool message naming its call.
func message(m llm.Message) openai.ChatCompletionMessageParamUnion {
	switch m.Role {
	case llm.RoleSystem:
		return openai.SystemMessage(m.Content)
	case llm.RoleTool:
		return openai.ToolMessage(m.Content, m.ToolCallID)
	case llm.RoleAssistant:
		if len(m.ToolCalls) == 0 {
			return openai.AssistantMessage(m.Content)
		}
		a := openai.ChatCompletionAssistantMessageParam{}
		if m.Content != "" {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: tc.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
			}})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
	}
	return openai.UserMessage(m.Content)
}

// httpStatus is the call's HTTP status as the SDK middleware saw it.
type httpStatus struct{ llm.SDKStatus }

func (s *httpStatus) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	s.Saw(res)
	return res, err
}

// wrap turns an SDK error into our classes (see llm.WrapSDKError).
func (s *httpStatus) wrap(err error) error {
	msg := ""
	if oe, ok := errors.AsType[*openai.Error](err); ok {
		msg = oe.Message
	}
	return s.Wrap(msg, err)
}
