package llm

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// openAIClient speaks OpenAI-compatible chat completions (OpenAI, DeepSeek) through the
// official SDK. The SDK's environment defaults (OPENAI_BASE_URL, OPENAI_API_KEY, org and
// project headers) and its own retries are bypassed: the service is built from our options
// only, and the retry policy is ours.
type openAIClient struct {
	cfg  Config
	svc  openai.ChatCompletionService
	call *caller
}

func newOpenAI(cfg Config, key string, o options) *openAIClient {
	svc := openai.NewChatCompletionService(
		option.WithHTTPClient(o.httpClient),
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(key),
		option.WithMaxRetries(0),
	)
	return &openAIClient{cfg: cfg, svc: svc, call: &caller{provider: cfg.Provider, model: cfg.Model, cfg: cfg, opts: o, cloud: true}}
}

func (c *openAIClient) Provider() string { return c.cfg.Provider }
func (c *openAIClient) Model() string    { return c.cfg.Model }
func (c *openAIClient) Cloud() bool      { return true }

func (c *openAIClient) Chat(ctx context.Context, req Request) (*Response, error) {
	return c.call.run(ctx, req, c.attempt)
}

func (c *openAIClient) attempt(ctx context.Context, req Request) (string, Usage, error) {
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(c.cfg.Model)}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case RoleAssistant:
			params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
		default:
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		}
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	if req.JSON {
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	}
	var st httpStatus
	res, err := c.svc.New(ctx, params, option.WithMiddleware(st.middleware))
	if err != nil {
		return "", Usage{}, st.wrap(err)
	}
	if len(res.Choices) == 0 {
		return "", Usage{}, badResponse("%s: no choices in the answer", c.cfg.Provider)
	}
	u := Usage{InputTokens: res.Usage.PromptTokens, OutputTokens: res.Usage.CompletionTokens}
	text := res.Choices[0].Message.Content
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		u = Usage{InputTokens: EstimateTokens(req.Messages), OutputTokens: estimateTokens(text)}
	}
	return text, u, nil
}

// httpStatus records the last HTTP status and headers an SDK call saw, so classification does
// not depend on how the SDK shapes its errors (a 5xx with a non-JSON body, a malformed 200).
type httpStatus struct {
	status int
	header http.Header
}

func (s *httpStatus) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if res != nil {
		s.status = res.StatusCode
		s.header = res.Header.Clone()
	}
	return res, err
}

// wrap turns an SDK error into our classes: a non-2xx status becomes statusError, an error
// after a 2xx answer is a malformed body, anything else is passed on (transport, context).
func (s *httpStatus) wrap(err error) error {
	var oe *openai.Error
	switch {
	case s.status >= 300 || s.status != 0 && s.status < 200:
		msg := ""
		if errors.As(err, &oe) {
			msg = oe.Message
		}
		return &statusError{status: s.status, retryAfter: parseRetryAfter(s.header, time.Now()), msg: msg}
	case s.status >= 200 && s.status < 300 && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled):
		return badResponse("%v", err)
	}
	return err
}
