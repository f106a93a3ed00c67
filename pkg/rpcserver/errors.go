package rpcserver

import (
	"context"
	"errors"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
)

// ErrorDomain is the google.rpc.ErrorInfo domain of the reasons the suite sends.
const ErrorDomain = "picoclaw"

var kindCodes = map[fault.Kind]connect.Code{
	fault.Invalid:         connect.CodeInvalidArgument,
	fault.NotFound:        connect.CodeNotFound,
	fault.Permission:      connect.CodePermissionDenied,
	fault.Unauthenticated: connect.CodeUnauthenticated,
	fault.Conflict:        connect.CodeAborted,
	fault.Precondition:    connect.CodeFailedPrecondition,
	fault.Exhausted:       connect.CodeResourceExhausted,
	fault.Unavailable:     connect.CodeUnavailable,
	fault.DataLoss:        connect.CodeDataLoss,
	fault.Canceled:        connect.CodeCanceled,
	fault.Deadline:        connect.CodeDeadlineExceeded,
}

// CodeOf is the Connect code of a fault kind.
func CodeOf(k fault.Kind) connect.Code {
	if c, ok := kindCodes[k]; ok {
		return c
	}
	return connect.CodeInternal
}

// ToConnect is the one mapping of a service's errors to Connect errors, by fault kind. An
// unclassified error becomes Internal with a generic message, its detail logged as
// "<service>.internal_error"; a reason travels as a google.rpc.ErrorInfo detail.
func ToConnect(ctx context.Context, log *slog.Logger, service string, err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) && fault.KindOf(err) == fault.Internal {
		return ce // already a Connect error (e.g. from the auth interceptor)
	}
	k := fault.KindOf(err)
	switch k {
	case fault.Internal:
		log.ErrorContext(ctx, service+".internal_error", slog.String("error", err.Error()))
		return connect.NewError(connect.CodeInternal, errors.New("internal error"))
	case fault.Unavailable:
		// The detail names a dependency's address or its driver's words: for the log only.
		log.WarnContext(ctx, service+".dependency_unavailable", slog.String("error", err.Error()))
		err = fault.WrapReason(k, fault.ReasonOf(err), errors.New(service+": a dependency is unavailable; retry later"))
	}
	out := connect.NewError(CodeOf(k), err)
	if r := fault.ReasonOf(err); r != "" {
		if d, derr := connect.NewErrorDetail(&errdetails.ErrorInfo{Reason: r, Domain: ErrorDomain}); derr == nil {
			out.AddDetail(d)
		}
	}
	return out
}

var codeKinds = func() map[connect.Code]fault.Kind {
	m := map[connect.Code]fault.Kind{connect.CodeAlreadyExists: fault.Conflict,
		connect.CodeOutOfRange: fault.Invalid, connect.CodeUnimplemented: fault.Internal}
	for k, c := range kindCodes {
		m[c] = k
	}
	return m
}()

// FromConnect is the inverse for clients: a Connect error (or a transport failure) becomes a
// classified error of the same kind, keeping the peer's message and reason. A failure without
// a code (a proxy's 502) is Unavailable.
func FromConnect(err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		// Connect reports every transport failure as a *connect.Error (unreachable:
		// Unavailable); anything else is the caller's own error, classified as it is.
		return fault.Wrap(fault.KindOf(err), err)
	}
	k, ok := codeKinds[ce.Code()]
	if !ok {
		k = fault.Internal
	}
	if ce.Code() == connect.CodeUnknown {
		// No code: the peer could not be reached or answered with something not Connect.
		k = fault.Unavailable
	}
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if info, ok := v.(*errdetails.ErrorInfo); ok && info.GetReason() != "" {
				return fault.WrapReason(k, info.GetReason(), err)
			}
		}
	}
	return fault.Wrap(k, err)
}
