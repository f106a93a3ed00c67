package rpcserver

import (
	"context"
	"errors"
	"log/slog"
	"strconv"

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
	return ToConnectIn(ctx, log, service, err, "")
}

// ToConnectIn is ToConnect for a request that names the user's locale: a failure the user is
// told about (a fault.Message, or a peer's text passed on) also travels as a
// google.rpc.LocalizedMessage in that locale (ja unless "en"), and a Message's code and
// arguments in the ErrorInfo's metadata ("code", "arg1", "arg2", …; the reason is the code
// unless the error has a reason of its own). The Connect message stays English, for logs.
func ToConnectIn(ctx context.Context, log *slog.Logger, service string, err error, locale string) error {
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
	info := &errdetails.ErrorInfo{Reason: fault.ReasonOf(err), Domain: ErrorDomain}
	if m := fault.MessageOf(err); m != nil {
		info.Metadata = map[string]string{"code": m.Code}
		for i, a := range m.Args {
			info.Metadata["arg"+strconv.Itoa(i+1)] = a
		}
		if info.Reason == "" {
			info.Reason = m.Code
		}
	}
	if info.Reason != "" {
		if d, derr := connect.NewErrorDetail(info); derr == nil {
			out.AddDetail(d)
		}
	}
	if text, ok := fault.Text(err, locale); ok {
		lang := "ja"
		if fault.English(locale) {
			lang = "en"
		}
		if d, derr := connect.NewErrorDetail(&errdetails.LocalizedMessage{Locale: lang, Message: text}); derr == nil {
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
// classified error of the same kind, keeping the peer's message and reason, and the text it
// gave for the user (a google.rpc.LocalizedMessage: fault.Text finds it). A failure without
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
	out := fault.Wrap(k, err)
	var said *errdetails.LocalizedMessage
	for _, d := range ce.Details() {
		v, derr := d.Value()
		if derr != nil {
			continue
		}
		switch v := v.(type) {
		case *errdetails.ErrorInfo:
			if v.GetReason() != "" {
				out = fault.WrapReason(k, v.GetReason(), err)
			}
		case *errdetails.LocalizedMessage:
			said = v
		}
	}
	if said != nil {
		// The peer's words for the user, to be passed on as they are (fault.Text).
		out = fault.WithText(out, said.GetLocale(), said.GetMessage())
	}
	return out
}
