package rpc

import (
	"context"
	"errors"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// toConnect is the one place approval maps domain errors to Connect codes. Unexpected errors
// become Internal with a generic message; the detail goes to the log.
func toConnect(ctx context.Context, log *slog.Logger, err error) error {
	var code connect.Code
	switch {
	case errors.Is(err, domain.ErrTampered):
		// Checked first: a tampered log can also surface as a conflict further down.
		log.ErrorContext(ctx, "approval.audit_tampered", slog.String("error", err.Error()))
		return withReason(connect.NewError(connect.CodeDataLoss, err), ReasonAuditTampered)
	case errors.Is(err, domain.ErrNotFound):
		code = connect.CodeNotFound
	case errors.Is(err, domain.ErrInvalid):
		code = connect.CodeInvalidArgument
	case errors.Is(err, domain.ErrPermission):
		code = connect.CodePermissionDenied
	case errors.Is(err, domain.ErrHashMismatch):
		return withReason(connect.NewError(connect.CodeDataLoss, err), ReasonHashMismatch)
	case errors.Is(err, domain.ErrExpired):
		code = connect.CodeFailedPrecondition
	case errors.Is(err, domain.ErrConflict), errors.Is(err, domain.ErrVersionConflict):
		code = connect.CodeAborted
	case errors.Is(err, domain.ErrUnavailable):
		code = connect.CodeUnavailable
	case errors.Is(err, context.Canceled):
		code = connect.CodeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		code = connect.CodeDeadlineExceeded
	default:
		log.ErrorContext(ctx, "approval.internal_error", slog.String("error", err.Error()))
		return connect.NewError(connect.CodeInternal, errors.New("internal error"))
	}
	return connect.NewError(code, err)
}

// Stable reasons carried as a google.rpc.ErrorInfo detail on CodeDataLoss errors, so a caller
// can tell the two apart without reading the message.
const (
	ErrorDomain         = "approval.picoclaw"
	ReasonAuditTampered = "AUDIT_TAMPERED"
	ReasonHashMismatch  = "HASH_MISMATCH"
)

func withReason(e *connect.Error, reason string) *connect.Error {
	if d, err := connect.NewErrorDetail(&errdetails.ErrorInfo{Reason: reason, Domain: ErrorDomain}); err == nil {
		e.AddDetail(d)
	}
	return e
}
