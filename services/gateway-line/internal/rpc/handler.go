// Package rpc maps the Connect API of gateway-line onto its use cases.
package rpc

import (
	"context"
	"errors"
	"log/slog"

	"connectrpc.com/connect"

	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
)

// Notifier pushes messages to a session (app.Processor).
type Notifier interface {
	Notify(ctx context.Context, sessionID, jobID, retryKey string, replies []domain.Reply) (int, error)
}

// Handler implements gatewayv1connect.NotificationServiceHandler.
type Handler struct {
	gatewayv1connect.UnimplementedNotificationServiceHandler
	notifier Notifier
	log      *slog.Logger
}

var _ gatewayv1connect.NotificationServiceHandler = (*Handler)(nil)

// New returns the handler.
func New(n Notifier, log *slog.Logger) *Handler { return &Handler{notifier: n, log: log} }

// Push delivers messages to a LINE session.
func (h *Handler) Push(ctx context.Context, req *gatewayv1.PushRequest) (*gatewayv1.PushResponse, error) {
	n, err := h.notifier.Notify(ctx, req.GetSessionId(), req.GetJobId(), req.GetRetryKey(), chatlink.RepliesFromProto(req.GetMessages()))
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	return &gatewayv1.PushResponse{Delivered: int32(n)}, nil
}

// toConnect is the one place that maps errors to codes.
func (h *Handler) toConnect(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, domain.ErrInvalid):
		return connect.NewError(connect.CodeInvalidArgument, err)
	case errors.Is(err, domain.ErrPermanent):
		return connect.NewError(connect.CodeFailedPrecondition, errors.New("LINE refused the message"))
	case errors.Is(err, context.DeadlineExceeded):
		return connect.NewError(connect.CodeDeadlineExceeded, errors.New("push timed out"))
	case errors.Is(err, context.Canceled):
		return connect.NewError(connect.CodeCanceled, errors.New("push cancelled"))
	}
	h.log.ErrorContext(ctx, "line.push_failed", slog.Any("error", err))
	return connect.NewError(connect.CodeUnavailable, errors.New("LINE push failed; retry with the same retry_key"))
}
