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

func (c *openAIClient) attempt(ctx context.Context, req llm.Request) (string, llm.Usage, error) {
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(c.cfg.Model)}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case llm.RoleAssistant:
			params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
		default:
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		}
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
		return "", llm.Usage{}, st.wrap(err)
	}
	if len(res.Choices) == 0 {
		return "", llm.Usage{}, llm.BadResponse("%s: no choices in the answer", c.cfg.Provider)
	}
	u := llm.Usage{InputTokens: res.Usage.PromptTokens, OutputTokens: res.Usage.CompletionTokens}
	text := res.Choices[0].Message.Content
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		u = llm.Usage{InputTokens: llm.EstimateTokens(req.Messages), OutputTokens: llm.EstimateText(text)}
	}
	return text, u, nil
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
