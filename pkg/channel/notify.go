package channel

import (
	"context"
	"errors"
	"log/slog"

	"connectrpc.com/connect"

	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
)

// NotificationHandler implements gatewayv1connect.NotificationServiceHandler on a runtime: the
// messages other services push (late results, alerts) are delivered through the channel.
type NotificationHandler struct {
	gatewayv1connect.UnimplementedNotificationServiceHandler
	rt *Runtime
	// display is the channel's name as people write it (LINE, Slack), for error messages.
	display string
}

var _ gatewayv1connect.NotificationServiceHandler = (*NotificationHandler)(nil)

// NewNotificationHandler returns the handler; display names the channel in error messages.
func NewNotificationHandler(rt *Runtime, display string) *NotificationHandler {
	return &NotificationHandler{rt: rt, display: display}
}

// Push delivers messages to a session.
func (h *NotificationHandler) Push(ctx context.Context, req *gatewayv1.PushRequest) (*gatewayv1.PushResponse, error) {
	n, err := h.rt.Notify(ctx, req.GetSessionId(), req.GetJobId(), req.GetRetryKey(), chatlink.RepliesFromProto(req.GetMessages()))
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	return &gatewayv1.PushResponse{Delivered: int32(n)}, nil
}

// toConnect is the one place that maps errors to codes.
func (h *NotificationHandler) toConnect(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, ErrUnknownSession):
		return connect.NewError(connect.CodeNotFound, err)
	case errors.Is(err, ErrInvalid):
		return connect.NewError(connect.CodeInvalidArgument, err)
	case errors.Is(err, ErrPermanent):
		return connect.NewError(connect.CodeFailedPrecondition, errors.New(h.display+" refused the message"))
	case errors.Is(err, context.DeadlineExceeded):
		return connect.NewError(connect.CodeDeadlineExceeded, errors.New("push timed out"))
	case errors.Is(err, context.Canceled):
		return connect.NewError(connect.CodeCanceled, errors.New("push cancelled"))
	}
	h.rt.log.ErrorContext(ctx, h.rt.name+".push_failed", slog.Any("error", err))
	return connect.NewError(connect.CodeUnavailable, errors.New(h.display+" push failed; retry with the same retry_key"))
}
