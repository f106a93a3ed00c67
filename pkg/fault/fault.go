// Package fault is the suite's one vocabulary of failures. A domain error is a sentinel made
// with New and a Kind; every edge maps the kind once: to a Connect code (pkg/rpcserver), to an
// HTTP status (Kind.HTTPStatus) and to a short text for the user (Kind.Text). Services add only
// what is theirs: their sentinels, a Reason for callers that must tell two errors of one kind
// apart, and their own texts where the generic one says too little.
package fault

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// Kind is what a failure means to the caller, independent of transport.
type Kind uint8

// The kinds. The zero Kind is Internal: an error nobody classified is a bug, never a reason
// to retry or to blame the caller.
const (
	// Internal is an unexpected failure; its detail is logged, never shown.
	Internal Kind = iota
	// Invalid is a malformed request: the caller must change it.
	Invalid
	// NotFound is an unknown job, order, session or resource.
	NotFound
	// Permission is a caller who may not do this.
	Permission
	// Unauthenticated is a caller who did not prove who it is.
	Unauthenticated
	// Conflict is a concurrent change: read again and retry.
	Conflict
	// Precondition is a state that does not allow the request (expired, already decided).
	Precondition
	// Exhausted is a limit reached (rate, cost, size).
	Exhausted
	// Unavailable is a transient fault of a dependency: retry later.
	Unavailable
	// DataLoss is an integrity failure: a hash mismatch, a tampered audit log.
	DataLoss
	// Canceled is a request its caller gave up.
	Canceled
	// Deadline is a request that ran out of time.
	Deadline
)

var kindNames = [...]string{"internal", "invalid", "not_found", "permission", "unauthenticated",
	"conflict", "precondition", "exhausted", "unavailable", "data_loss", "canceled", "deadline"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "internal"
}

// Retryable reports whether the same request may succeed later without change.
func (k Kind) Retryable() bool {
	return k == Unavailable || k == Deadline || k == Conflict || k == Exhausted
}

// HTTPStatus is the kind's status on a REST API.
func (k Kind) HTTPStatus() int {
	switch k {
	case Invalid:
		return http.StatusBadRequest
	case NotFound:
		return http.StatusNotFound
	case Permission:
		return http.StatusForbidden
	case Unauthenticated:
		return http.StatusUnauthorized
	case Conflict, Precondition, DataLoss:
		return http.StatusConflict
	case Exhausted:
		return http.StatusTooManyRequests
	case Unavailable:
		return http.StatusServiceUnavailable
	case Canceled:
		return 499 // the client closed the request
	case Deadline:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// Error is a classified error: a sentinel (New) or a classified wrap of another error (Wrap).
type Error struct {
	kind   Kind
	reason string
	msg    string
	err    error
}

// New makes a sentinel of kind k. Two sentinels are different errors even with the same text.
func New(k Kind, msg string) *Error { return &Error{kind: k, msg: msg} }

// WithReason makes a sentinel that also carries a stable machine-readable reason
// (e.g. "AUDIT_TAMPERED"), sent to callers beside the kind.
func WithReason(k Kind, reason, msg string) *Error {
	return &Error{kind: k, reason: reason, msg: msg}
}

// Wrap classifies err as kind k, keeping it for errors.Is/As and its message.
func Wrap(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Error{kind: k, err: err}
}

// WrapReason is Wrap with a stable reason.
func WrapReason(k Kind, reason string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{kind: k, reason: reason, err: err}
}

func (e *Error) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return e.msg
}

// Unwrap gives the wrapped error of a Wrap.
func (e *Error) Unwrap() error { return e.err }

// Kind is the error's kind.
func (e *Error) Kind() Kind { return e.kind }

// Reason is the stable reason, or "".
func (e *Error) Reason() string { return e.reason }

// KindOf is the kind of err: the outermost classified error in its chain wins; context
// cancellation and deadlines are recognised; anything else is Internal.
func KindOf(err error) Kind {
	var fe *Error
	switch {
	case err == nil:
		return Internal
	case errors.As(err, &fe):
		return fe.kind
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return Deadline
	}
	return Internal
}

// ReasonOf is the first reason in err's chain, or "".
func ReasonOf(err error) string {
	for err != nil {
		var fe *Error
		if !errors.As(err, &fe) {
			return ""
		}
		if fe.reason != "" {
			return fe.reason
		}
		err = fe.err
	}
	return ""
}

// Public is how err is shown on a REST API: its status, a stable lower-case code (the reason
// when it has one, else the kind) and a message. The message of an Internal or Unavailable
// error is generic: their detail (an address, a driver's text) is for the log only.
func Public(err error) (status int, code, msg string) {
	k := KindOf(err)
	code = map[Kind]string{Invalid: "invalid_argument", Permission: "forbidden"}[k]
	if code == "" {
		code = k.String()
	}
	if r := ReasonOf(err); r != "" {
		code = strings.ToLower(r)
	}
	msg = err.Error()
	switch k {
	case Internal:
		msg = "internal error"
	case Unavailable:
		msg = "a dependency is unavailable; retry later"
	}
	return k.HTTPStatus(), code, msg
}
