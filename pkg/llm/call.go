package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

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

// Option tunes a client built by New.
type Option func(*options)

type options struct {
	httpClient *http.Client
	logger     *slog.Logger
	observer   Observer
	sleep      SleepFunc
	lookupEnv  func(string) (string, bool)
	maxWait    time.Duration
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

func sleepCtx(ctx context.Context, d time.Duration) error {
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

// badResponse marks an answer that is not the provider's protocol.
func badResponse(format string, args ...any) error {
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

// caller runs the retry policy shared by every HTTP adapter.
type caller struct {
	provider string
	model    string
	cfg      Config
	opts     options
	cloud    bool
}

// attempt performs one HTTP exchange with the (already masked) request.
type attempt func(ctx context.Context, req Request) (text string, usage Usage, err error)

const (
	baseBackoff = 500 * time.Millisecond
	maxBackoff  = 8 * time.Second
)

func (c *caller) run(ctx context.Context, req Request, do attempt) (*Response, error) {
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
	for {
		attempts++
		actx, cancel := context.WithTimeout(ctx, perAttempt)
		text, usage, err := do(actx, req)
		attemptTimedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		if err == nil {
			resp := &Response{Text: text, Usage: usage, Latency: time.Since(start), Provider: c.provider, Model: c.model, Attempts: attempts}
			c.finish(ctx, resp.Usage, resp.Latency, attempts, nil)
			return resp, nil
		}
		class, retryAfter := c.classify(ctx, err, attemptTimedOut)
		lastErr = fmt.Errorf("%s %s: %w: %s", c.provider, c.model, class, redact.Secrets(err.Error()))
		retryable := errors.Is(class, ErrRateLimited) || errors.Is(class, ErrUnavailable) || errors.Is(class, ErrTimeout)
		if ctx.Err() != nil || !retryable || attempts > c.cfg.RetryMax {
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
	return nil, &CallError{Err: lastErr, Attempts: attempts}
}

// CallError is a failed call: the classified error plus how many attempts were made.
type CallError struct {
	Err      error
	Attempts int
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

func (c *caller) classify(ctx context.Context, err error, attemptTimedOut bool) (error, time.Duration) {
	var se *statusError
	switch {
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

func (c *caller) finish(ctx context.Context, u Usage, lat time.Duration, attempts int, err error) {
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

// maskRequest masks secrets and personal data in every message bound for a cloud provider.
func maskRequest(req Request) Request {
	msgs := make([]Message, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = Message{Role: m.Role, Content: redact.ForCloud(m.Content)}
	}
	req.Messages = msgs
	return req
}

// estimateTokens is a rough count for providers that report none: about four bytes a token
// for Latin text, and one token per CJK rune.
func estimateTokens(s string) int64 {
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
		n += estimateTokens(m.Content) + 4
	}
	return n
}
