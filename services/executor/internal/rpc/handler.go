// Package rpc maps the Connect API of executor onto its use cases.
package rpc

import (
	"context"
	"errors"
	"log/slog"

	"connectrpc.com/connect"

	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/pbconv"
)

// Handler implements executorv1connect.ExecutorServiceHandler.
type Handler struct {
	svc *app.Service
	log *slog.Logger
}

// NewHandler returns the handler.
func NewHandler(svc *app.Service, log *slog.Logger) *Handler {
	return &Handler{svc: svc, log: log}
}

var _ executorv1connect.ExecutorServiceHandler = (*Handler)(nil)

// Execute claims and runs a job; it takes only the job id.
func (h *Handler) Execute(ctx context.Context, req *executorv1.ExecuteRequest) (*executorv1.ExecuteResponse, error) {
	out, err := h.svc.Execute(ctx, req.GetJobId(), req.GetLocale(), req.GetDryRun())
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	return &executorv1.ExecuteResponse{Result: pbconv.Result(out.Result), ResultText: out.Text}, nil
}

// DryRun reports what a patch would do.
func (h *Handler) DryRun(ctx context.Context, req *executorv1.DryRunRequest) (*executorv1.DryRunResponse, error) {
	out, err := h.svc.DryRun(ctx, req.GetPatch(), req.GetLocale())
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	return &executorv1.DryRunResponse{Result: pbconv.Result(out.Result), ResultText: out.Text}, nil
}

// toConnect is the one place where domain errors become Connect codes.
func (h *Handler) toConnect(ctx context.Context, err error) error {
	code := connect.CodeInternal
	switch {
	case errors.Is(err, domain.ErrInvalid):
		code = connect.CodeInvalidArgument
	case errors.Is(err, domain.ErrNotFound):
		code = connect.CodeNotFound
	case errors.Is(err, domain.ErrHashMismatch):
		code = connect.CodeDataLoss
	case errors.Is(err, domain.ErrPermission):
		code = connect.CodePermissionDenied
	case errors.Is(err, domain.ErrConflict), errors.Is(err, domain.ErrExpired):
		code = connect.CodeFailedPrecondition
	case errors.Is(err, domain.ErrUnavailable):
		code = connect.CodeUnavailable
	}
	if code == connect.CodeInternal {
		h.log.ErrorContext(ctx, "executor.internal_error", slog.String("error", err.Error()))
		return connect.NewError(code, errors.New("internal error"))
	}
	return connect.NewError(code, err)
}
