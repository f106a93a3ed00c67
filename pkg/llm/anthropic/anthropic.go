// Package anthropic is the client for the Anthropic Messages API through the official SDK.
// Only composition roots that may call a cloud model import it.
package anthropic

import (
	"context"
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

func (c *anthropicClient) attempt(ctx context.Context, req llm.Request) (string, llm.Usage, error) {
	params := anthropic.MessageNewParams{Model: anthropic.Model(c.cfg.Model), MaxTokens: int64(req.MaxTokens)}
	var system []string
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			system = append(system, m.Content)
		case llm.RoleAssistant:
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
		return "", llm.Usage{}, st.wrap(err)
	}
	var b strings.Builder
	for _, blk := range res.Content {
		if blk.Type == "text" {
			b.WriteString(blk.Text)
		}
	}
	if res.Type != "message" {
		return "", llm.Usage{}, llm.BadResponse("anthropic: answer type %q is not a message", res.Type)
	}
	text := b.String()
	if req.JSON {
		text = stripFence(text)
	}
	return text, llm.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens}, nil
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
