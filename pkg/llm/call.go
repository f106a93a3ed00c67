package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/outbound"
	"github.com/picoclaw-suite/picoclaw/pkg/redact"
)

// Call is what one finished model call reports to an Observer (metrics, cost accounting).
type Call struct {
	Provider string
	Model    string
	Usage    Usage
	Latency  time.Duration
	Attempts int
	// Err is nil on success; Code(Err) gives its class.
	Err error
}

// Observer receives every finished call.
type Observer func(ctx context.Context, c Call)

// SleepFunc waits d or until ctx is done.
type SleepFunc func(ctx context.Context, d time.Duration) error

// Option tunes a client built by a provider package (pkg/llm/ollama, pkg/llm/openai,
// pkg/llm/anthropic, or the pkg/llm/providers factory).
type Option func(*options)

type options struct {
	httpClient *http.Client
	logger     *slog.Logger
	observer   Observer
	sleep      SleepFunc
	lookupEnv  func(string) (string, bool)
	maxWait    time.Duration
	tracer     trace.Tracer
	tp         trace.TracerProvider
}

// WithTracerProvider makes every call a span ("chat <model>", GenAI conventions: gen_ai.system,
// gen_ai.request.model, gen_ai.usage.*) with job_id, tokens
// and attempts.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) {
		if tp != nil {
			o.tracer = tp.Tracer("github.com/picoclaw-suite/picoclaw/pkg/llm")
			o.tp = tp
		}
	}
}

// WithHTTPClient sets the HTTP client (default: a client with no overall timeout; each
// attempt is bounded by timeout_sec).
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.httpClient = c } }

// WithLogger sets the logger for llm.call / llm.retry lines.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithObserver registers a callback for every finished call.
func WithObserver(f Observer) Option { return func(o *options) { o.observer = f } }

// WithSleep replaces the wait between retries (tests record the waits instead of sleeping).
func WithSleep(f SleepFunc) Option { return func(o *options) { o.sleep = f } }

// WithLookupEnv replaces os.LookupEnv for reading the API key.
func WithLookupEnv(f func(string) (string, bool)) Option { return func(o *options) { o.lookupEnv = f } }

// WithMaxRetryWait caps a single wait between attempts, including a Retry-After the provider
// asks for (default 60s).
func WithMaxRetryWait(d time.Duration) Option { return func(o *options) { o.maxWait = d } }

// Sleep waits d or until ctx ends (its error then); the default SleepFunc.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// statusError is a non-2xx HTTP answer of one attempt.
type statusError struct {
	status     int
	retryAfter time.Duration
	msg        string
}

func (e *statusError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("HTTP %d", e.status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.status, e.msg)
}

// ProviderMessage is the provider's own words about a failed call (the message of its error
// body, secrets masked, at most 300 characters), or "" when it said nothing.
func ProviderMessage(err error) string {
	var msg string
	if ce, ok := errors.AsType[*CallError](err); ok {
		msg = ce.Reason
	} else if se, ok := errors.AsType[*statusError](err); ok {
		msg = se.msg
	}
	msg = strings.TrimSpace(redact.Secrets(msg))
	if r := []rune(msg); len(r) > 300 {
		msg = string(r[:300]) + "…"
	}
	return msg
}

// HTTPStatusError is a non-2xx answer of one attempt, as a provider adapter reports it: the
// Runner classifies it (401/403, 429/529, 408, 5xx, other 4xx) and honours the Retry-After
// (or retry-after-ms) header.
func HTTPStatusError(status int, header http.Header, msg string) error {
	return &statusError{status: status, retryAfter: parseRetryAfter(header, time.Now()), msg: msg}
}

// BadResponse marks an answer that is not the provider's protocol (ErrBadResponse).
func BadResponse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadResponse, fmt.Sprintf(format, args...))
}

// parseRetryAfter reads retry-after-ms (OpenAI, Anthropic) or Retry-After (seconds or an
// HTTP date).
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// Runner is what a provider adapter gets from the core: the settled config, the resolved
// options and the one call policy (span, masking for cloud providers, local_only, per-attempt
// timeout, retries, logging, observer) every adapter runs its HTTP exchanges under.
type Runner struct {
	provider string
	model    string
	cfg      Config
	opts     options
	cloud    bool
	// turns bounds the attempts under way at once at a local model (Config.MaxParallel): nil
	// for the other providers.
	turns chan struct{}
}

// NewRunner fills cfg's defaults, validates it and resolves opts. The provider is
// cfg.Provider; cloud providers get masking and the local_only refusal.
func NewRunner(cfg Config, opts ...Option) (*Runner, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("llm config: %w", err)
	}
	o := options{lookupEnv: os.LookupEnv, sleep: Sleep, maxWait: 60 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	if o.httpClient == nil {
		// With a tracer, each HTTP exchange (attempt) is a span under the call's.
		var out []outbound.Option
		if o.tp != nil {
			out = append(out, outbound.Traced(o.tp))
		}
		o.httpClient = outbound.Client(0, out...)
	}
	if o.tracer == nil {
		o.tracer = noop.NewTracerProvider().Tracer("")
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	r := &Runner{provider: cfg.Provider, model: cfg.Model, cfg: cfg, opts: o, cloud: IsCloud(cfg.Provider)}
	if cfg.Provider == ProviderOllama && cfg.MaxParallel > 0 {
		r.turns = make(chan struct{}, cfg.MaxParallel)
	}
	return r, nil
}

// Config is the settled config (defaults filled).
func (c *Runner) Config() Config { return c.cfg }

// HTTPClient is the client adapters send with.
func (c *Runner) HTTPClient() *http.Client { return c.opts.httpClient }

// Logger is the logger of llm.* lines.
func (c *Runner) Logger() *slog.Logger { return c.opts.logger }

// Sleep waits d or until ctx is done (replaced in tests through WithSleep).
func (c *Runner) Sleep(ctx context.Context, d time.Duration) error { return c.opts.sleep(ctx, d) }

// APIKey reads the key from the environment variable named by api_key_env; an empty one is
// ErrNoAPIKey.
func (c *Runner) APIKey() (string, error) {
	key, _ := c.opts.lookupEnv(c.cfg.APIKeyEnv)
	key = strings.TrimSpace(key)
	if key == "" {
		return "", fmt.Errorf("%s: %w: environment variable %s is empty", c.cfg.Provider, ErrNoAPIKey, c.cfg.APIKeyEnv)
	}
	return key, nil
}

// Answer is what one successful attempt got from the provider.
type Answer struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
}

// Attempt performs one HTTP exchange with the (already masked) request.
type Attempt func(ctx context.Context, req Request) (Answer, error)

const (
	baseBackoff = 500 * time.Millisecond
	maxBackoff  = 8 * time.Second
)

// Run makes one call: do is tried under the call policy until it succeeds, fails for good, or
// the retries or the context run out.
func (c *Runner) Run(ctx context.Context, req Request, do Attempt) (resp *Response, err error) {
	// Attributes by the OpenTelemetry GenAI conventions (gen_ai.*); ours under picoclaw.llm.*.
	attrs := []attribute.KeyValue{attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.system", c.provider),
		attribute.String("gen_ai.provider.name", c.provider), attribute.String("gen_ai.request.model", c.model),
		attribute.String(jobid.BaggageKey, jobid.FromContext(ctx)), attribute.Bool("picoclaw.llm.json", req.JSON),
		attribute.Int("picoclaw.llm.tools", len(req.Tools))}
	if req.MaxTokens > 0 {
		attrs = append(attrs, attribute.Int("gen_ai.request.max_tokens", req.MaxTokens))
	}
	ctx, span := c.opts.tracer.Start(ctx, "chat "+c.model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer func() {
		if resp != nil {
			span.SetAttributes(attribute.Int64("gen_ai.usage.input_tokens", resp.Usage.InputTokens),
				attribute.Int64("gen_ai.usage.output_tokens", resp.Usage.OutputTokens), attribute.String("gen_ai.response.model", resp.Model),
				attribute.Int("picoclaw.llm.attempts", resp.Attempts), attribute.Int("picoclaw.llm.tool_calls", len(resp.ToolCalls)))
		}
		if err != nil {
			span.SetAttributes(attribute.String("error.type", Code(err)), attribute.Int("picoclaw.llm.attempts", Attempts(err)))
			span.SetStatus(codes.Error, redact.Secrets(err.Error()))
		}
		span.End()
	}()
	return c.runRetries(ctx, req, do)
}

func (c *Runner) runRetries(ctx context.Context, req Request, do Attempt) (*Response, error) {
	if c.cloud && req.LocalOnly {
		return nil, fmt.Errorf("%s: %w", c.provider, ErrLocalOnly)
	}
	if c.cloud {
		req = maskRequest(req)
	}
	if req.MaxTokens <= 0 {
		req.MaxTokens = c.cfg.MaxTokens
	}
	perAttempt := req.Timeout
	if perAttempt <= 0 {
		perAttempt = time.Duration(c.cfg.TimeoutSec) * time.Second
	}
	start := time.Now()
	attempts := 0
	var lastErr error
	// retryIn is the wait the provider asked for when it exceeded the retry budget.
	var retryIn time.Duration
	// reason is the provider's own message in the last error answer, status its HTTP status.
	var reason string
	var status int
	for {
		// A local model answers a few calls at a time: the others wait here, so their
		// attempt's timeout counts the model's work, not the queue before it.
		if !c.enter(ctx) {
			break
		}
		attempts++
		ans, attemptTimedOut, err := c.attempt(ctx, req, do, perAttempt)
		if err == nil {
			resp := &Response{Text: ans.Text, ToolCalls: ans.ToolCalls, Usage: ans.Usage, Latency: time.Since(start), Provider: c.provider, Model: c.model, Attempts: attempts}
			c.finish(ctx, resp.Usage, resp.Latency, attempts, nil)
			return resp, nil
		}
		class, retryAfter := c.classify(ctx, err, attemptTimedOut)
		reason, status = "", 0
		if se, ok := errors.AsType[*statusError](err); ok {
			reason, status = se.msg, se.status
		}
		lastErr = fmt.Errorf("%s %s: %w: %s", c.provider, c.model, class, redact.Secrets(err.Error()))
		if errors.Is(class, ErrUnavailable) && unreachable(err) {
			lastErr = fmt.Errorf("%s %s: %w: %w: %s", c.provider, c.model, class, ErrUnreachable, redact.Secrets(err.Error()))
		}
		retryable := errors.Is(class, ErrRateLimited) || errors.Is(class, ErrUnavailable) || errors.Is(class, ErrTimeout)
		if ctx.Err() != nil || !retryable || attempts > c.cfg.RetryMax {
			break
		}
		if retryAfter > c.opts.maxWait {
			// The provider asks for longer than any wait here: the outcome is known now.
			until := time.Now().Add(retryAfter).UTC().Format(time.RFC3339)
			lastErr = fmt.Errorf("%w (the provider asks to wait %s: try again after %s)", lastErr, retryAfter.Round(time.Second), until)
			retryIn = retryAfter
			break
		}
		wait := retryAfter
		if wait <= 0 {
			wait = baseBackoff << (attempts - 1)
			if wait > maxBackoff {
				wait = maxBackoff
			}
		}
		if wait > c.opts.maxWait {
			wait = c.opts.maxWait
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			// Waiting would outlive the caller: give up now with the real cause.
			break
		}
		c.opts.logger.WarnContext(ctx, "llm.retry", slog.String("provider", c.provider), slog.String("model", c.model),
			slog.Int("attempt", attempts), slog.String("error_code", Code(class)), slog.Duration("wait", wait))
		if err := c.opts.sleep(ctx, wait); err != nil {
			break
		}
	}
	if ctx.Err() != nil && !errors.Is(lastErr, ErrUnauthenticated) {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			lastErr = fmt.Errorf("%s %s: %w: %w", c.provider, c.model, ErrTimeout, ctx.Err())
		} else {
			lastErr = fmt.Errorf("%s %s: %w", c.provider, c.model, ctx.Err())
		}
	}
	c.finish(ctx, Usage{}, time.Since(start), attempts, lastErr)
	return nil, &CallError{Err: lastErr, Attempts: attempts, RetryAfter: retryIn, Reason: reason, Status: status}
}

// attempt runs do once within perAttempt, in a turn that enter gave it (returned however do
// ends); timedOut tells whether perAttempt ran out.
func (c *Runner) attempt(ctx context.Context, req Request, do Attempt, perAttempt time.Duration) (ans Answer, timedOut bool, err error) {
	defer c.leave()
	actx, cancel := context.WithTimeout(ctx, perAttempt)
	defer cancel()
	ans, err = do(actx, req)
	return ans, errors.Is(actx.Err(), context.DeadlineExceeded), err
}

// enter waits until an attempt may start (Runner.turns); it is false when ctx ended first.
// An attempt that entered ends with leave.
func (c *Runner) enter(ctx context.Context) bool {
	if c.turns == nil {
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	select {
	case c.turns <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// leave ends an attempt that entered.
func (c *Runner) leave() {
	if c.turns != nil {
		<-c.turns
	}
}

// unreachable reports whether err is a failure to reach the server at all (refused, reset,
// closed mid-answer, no route), as opposed to an answer that was an error.
func unreachable(err error) bool {
	if _, ok := errors.AsType[*statusError](err); ok {
		return false
	}
	for _, e := range []error{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
		syscall.EHOSTUNREACH, syscall.ENETUNREACH, io.EOF, io.ErrUnexpectedEOF} {
		if errors.Is(err, e) {
			return true
		}
	}
	_, dns := errors.AsType[*net.DNSError](err)
	return dns
}

// StatusCode is the HTTP status of a provider's error answer in err: one attempt's, or a
// failed call's last (0 when err holds none).
func StatusCode(err error) int {
	if se, ok := errors.AsType[*statusError](err); ok {
		return se.status
	}
	if ce, ok := errors.AsType[*CallError](err); ok {
		return ce.Status
	}
	return 0
}

// CallError is a failed call: the classified error plus how many attempts were made.
type CallError struct {
	Err      error
	Attempts int
	// RetryAfter is how long the provider asked to wait when that was beyond the retry budget.
	RetryAfter time.Duration
	// Reason is the provider's own message in its last error answer ("" when none), Status
	// that answer's HTTP status (0 when the last attempt got no answer).
	Reason string
	Status int
}

func (e *CallError) Error() string { return e.Err.Error() }
func (e *CallError) Unwrap() error { return e.Err }

// Attempts returns how many HTTP attempts a failed call made (0 when err is not a call error).
func Attempts(err error) int {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Attempts
	}
	return 0
}

func (c *Runner) classify(ctx context.Context, err error, attemptTimedOut bool) (error, time.Duration) {
	var se *statusError
	switch {
	case errors.Is(err, ErrModelUnavailable):
		// The model is not installed: asking again cannot install it.
		return ErrModelUnavailable, 0
	case errors.As(err, &se):
		switch {
		case se.status == http.StatusUnauthorized || se.status == http.StatusForbidden:
			return ErrUnauthenticated, 0
		case se.status == http.StatusTooManyRequests || se.status == 529:
			return ErrRateLimited, se.retryAfter
		case se.status == http.StatusRequestTimeout:
			return ErrTimeout, se.retryAfter
		case se.status >= 500:
			return ErrUnavailable, se.retryAfter
		default:
			return ErrRejected, 0
		}
	case errors.Is(err, ErrBadResponse):
		return ErrBadResponse, 0
	case ctx.Err() != nil:
		return ErrTimeout, 0
	case attemptTimedOut || errors.Is(err, context.DeadlineExceeded):
		return ErrTimeout, 0
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ErrTimeout, 0
	}
	return ErrUnavailable, 0
}

func (c *Runner) finish(ctx context.Context, u Usage, lat time.Duration, attempts int, err error) {
	attrs := []slog.Attr{
		slog.String("provider", c.provider), slog.String("model", c.model),
		slog.Int64("input_tokens", u.InputTokens), slog.Int64("output_tokens", u.OutputTokens),
		slog.Int64("latency_ms", lat.Milliseconds()), slog.Int("attempts", attempts),
	}
	if err != nil {
		attrs = append(attrs, slog.String("error_code", Code(err)), slog.String("error", redact.Secrets(err.Error())))
		c.opts.logger.LogAttrs(ctx, slog.LevelWarn, "llm.call_failed", attrs...)
	} else {
		c.opts.logger.LogAttrs(ctx, slog.LevelInfo, "llm.call", attrs...)
	}
	if c.opts.observer != nil {
		c.opts.observer(ctx, Call{Provider: c.provider, Model: c.model, Usage: u, Latency: lat, Attempts: attempts, Err: err})
	}
}

// maskRequest masks secrets and personal data in every message bound for a cloud provider,
// tool results included. The arguments of earlier tool calls are left as they are: the model
// wrote them from what it was shown, which was masked, and masking could break their JSON.
func maskRequest(req Request) Request {
	msgs := make([]Message, len(req.Messages))
	for i, m := range req.Messages {
		m.Content = redact.ForCloud(m.Content)
		msgs[i] = m
	}
	req.Messages = msgs
	return req
}

// EstimateText is a rough token count for providers that report none: about four bytes a
// token for Latin text, and one token per CJK rune.
func EstimateText(s string) int64 {
	var ascii, other int64
	for _, r := range s {
		if r < 0x80 {
			ascii++
		} else {
			other++
		}
	}
	return (ascii+3)/4 + other
}

// EstimateTokens estimates the prompt tokens of msgs (used for cost checks before calling).
func EstimateTokens(msgs []Message) int64 {
	var n int64
	for _, m := range msgs {
		n += EstimateText(m.Content) + 4
		for _, tc := range m.ToolCalls {
			n += EstimateText(tc.Name) + EstimateText(tc.Arguments) + 4
		}
	}
	return n
}

// NewCloudRunner is the runner of a cloud provider's client: cfg with defaults filled and
// validated, its provider one of providers, and the API key from the environment variable
// api_key_env names.
func NewCloudRunner(cfg Config, providers []string, opts ...Option) (*Runner, string, error) {
	r, err := NewRunner(cfg, opts...)
	if err != nil {
		return nil, "", err
	}
	if p := r.Config().Provider; !slices.Contains(providers, p) {
		return nil, "", fmt.Errorf("llm: provider %q is not %s", p, strings.Join(providers, " or "))
	}
	key, err := r.APIKey()
	if err != nil {
		return nil, "", err
	}
	return r, key, nil
}
