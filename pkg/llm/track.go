package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/redact"
)

// Tracker follows the calls of a client: heartbeat's agents implement it (the agent is busy
// with the call's JobID while the model works, and a provider error becomes its last error).
// The interface lives here so that the tracker's package need not import this one.
type Tracker interface {
	// Track is told that a call starts under ctx; the returned func is called once with the
	// call's error (nil on success) when it ends. A failed call's error is a *Failure: what
	// kind of failure it was and a detail safe to show (ReportCode, ReportDetail).
	Track(ctx context.Context) (done func(err error))
}

// Tracked makes every Chat of c a call reported to t. A nil c or t leaves c as it is.
func Tracked(c Client, t Tracker) Client {
	if c == nil || t == nil {
		return c
	}
	return &trackedClient{Client: c, tracker: t}
}

type trackedClient struct {
	Client
	tracker Tracker
}

func (t *trackedClient) Chat(ctx context.Context, req Request) (*Response, error) {
	done := t.tracker.Track(ctx)
	res, err := t.Client.Chat(ctx, req)
	if err != nil {
		done(FailureOf(err, t.Provider(), t.Model()))
	} else {
		done(nil)
	}
	return res, err
}

// Failure is a failed call as a status report shows it: a stable code of what kind of failure
// it was, which the report says in the reader's language, and a short detail that is safe to
// show anyone — the provider, the model, the HTTP status and the start of the provider's own
// words, secrets masked. The provider's full answer stays in the error (Err), for the log.
type Failure struct {
	Err    error
	Code   string
	Detail string
}

// The codes of a Failure: "llm." and what went wrong.
const (
	FailureUnreachable      = "llm.unreachable"
	FailureServerError      = "llm.unavailable"
	FailureUnauthenticated  = "llm.unauthenticated"
	FailureNoAPIKey         = "llm.no_api_key"
	FailureRateLimited      = "llm.rate_limited"
	FailureModelUnavailable = "llm.model_unavailable"
	FailureTimeout          = "llm.timeout"
	FailureBadResponse      = "llm.bad_response"
	FailureRejected         = "llm.rejected"
	FailureLocalOnly        = "llm.local_only"
	FailureCanceled         = "llm.canceled"
	FailureOther            = "llm.error"
)

// FailureDetailMax bounds a Failure's detail, in characters.
const FailureDetailMax = 80

// FailureOf is err, a failed call to provider's model, as a status report shows it.
func FailureOf(err error, provider, model string) *Failure {
	code := FailureOther
	switch c := Code(err); {
	case errors.Is(err, ErrUnreachable):
		code = FailureUnreachable
	case c == "unavailable":
		code = FailureServerError
	case c != "" && c != "error":
		code = "llm." + c
	}
	detail := strings.TrimSpace(provider + " " + model)
	if status := StatusCode(err); status > 0 {
		detail += fmt.Sprintf(" HTTP %d", status)
	}
	if said := ProviderMessage(err); said != "" {
		detail += ": " + said
	}
	return &Failure{Err: err, Code: code, Detail: clipRunes(strings.Join(strings.Fields(redact.Secrets(detail)), " "), FailureDetailMax)}
}

func (f *Failure) Error() string { return f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

// ReportCode is the failure's code (the heartbeat's error_code).
func (f *Failure) ReportCode() string { return f.Code }

// ReportDetail is the failure's safe detail (the heartbeat's error_message).
func (f *Failure) ReportDetail() string { return f.Detail }

func clipRunes(s string, max int) string {
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
