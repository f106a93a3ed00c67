package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// anthropicClient speaks the Anthropic Messages API through the official SDK, built from our
// options only (no ANTHROPIC_* environment defaults, no SDK retries).
type anthropicClient struct {
	cfg  Config
	svc  anthropic.MessageService
	call *caller
}

func newAnthropic(cfg Config, key string, o options) *anthropicClient {
	svc := anthropic.NewMessageService(
		option.WithHTTPClient(o.httpClient),
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(key),
		option.WithMaxRetries(0),
	)
	return &anthropicClient{cfg: cfg, svc: svc, call: &caller{provider: ProviderAnthropic, model: cfg.Model, cfg: cfg, opts: o, cloud: true}}
}

func (c *anthropicClient) Provider() string { return ProviderAnthropic }
func (c *anthropicClient) Model() string    { return c.cfg.Model }
func (c *anthropicClient) Cloud() bool      { return true }

func (c *anthropicClient) Chat(ctx context.Context, req Request) (*Response, error) {
	return c.call.run(ctx, req, c.attempt)
}

// jsonInstruction is appended to the system prompt when JSON is wanted, since the Messages
// API has no JSON mode.
const jsonInstruction = "Answer with a single JSON object only, no prose and no code fences."

func (c *anthropicClient) attempt(ctx context.Context, req Request) (string, Usage, error) {
	params := anthropic.MessageNewParams{Model: anthropic.Model(c.cfg.Model), MaxTokens: int64(req.MaxTokens)}
	var system []string
	for _, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			system = append(system, m.Content)
		case RoleAssistant:
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(anthropic.NewTextBlock(m.Content)))
		default:
			params.Messages = append(params.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
		}
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
		return "", Usage{}, st.wrap(err)
	}
	var b strings.Builder
	for _, blk := range res.Content {
		if blk.Type == "text" {
			b.WriteString(blk.Text)
		}
	}
	if res.Type != "message" {
		return "", Usage{}, badResponse("anthropic: answer type %q is not a message", res.Type)
	}
	text := b.String()
	if req.JSON {
		text = stripFence(text)
	}
	return text, Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens}, nil
}

type anthropicStatus struct {
	status int
	header http.Header
}

func (s *anthropicStatus) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if res != nil {
		s.status = res.StatusCode
		s.header = res.Header.Clone()
	}
	return res, err
}

func (s *anthropicStatus) wrap(err error) error {
	var ae *anthropic.Error
	switch {
	case s.status >= 300 || s.status != 0 && s.status < 200:
		msg := ""
		if errors.As(err, &ae) {
			msg = ae.Error()
		}
		return &statusError{status: s.status, retryAfter: parseRetryAfter(s.header, time.Now()), msg: msg}
	case s.status >= 200 && s.status < 300 && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled):
		return badResponse("%v", err)
	}
	return err
}

// stripFence removes a Markdown code fence around a JSON answer.
func stripFence(s string) string {
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
