// Package rpc maps the Connect API of chat-mio onto its use cases.
package rpc

import (
	"context"
	"errors"
	"log/slog"

	"connectrpc.com/connect"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

// MessageHandler is the use case behind HandleMessage.
type MessageHandler interface {
	HandleMessage(ctx context.Context, req *chatv1.HandleMessageRequest) (*chatv1.HandleMessageResponse, error)
}

// Handler implements chatv1connect.ChatServiceHandler.
type Handler struct {
	App MessageHandler
	Log *slog.Logger
}

var _ chatv1connect.ChatServiceHandler = (*Handler)(nil)

// HandleMessage implements chatv1connect.ChatServiceHandler.
func (h *Handler) HandleMessage(ctx context.Context, req *chatv1.HandleMessageRequest) (*chatv1.HandleMessageResponse, error) {
	// The sender is who the channel's gateway vouched for, never just what the request says.
	p, ok := svcauth.PrincipalFrom(ctx)
	if !ok || p.Channel != req.GetChannel() || p.User != req.GetUserId() {
		h.Log.WarnContext(ctx, "chat.sender_not_vouched", slog.String("channel", req.GetChannel()), slog.String("caller", svcauth.CallerFrom(ctx)))
		return nil, connect.NewError(connect.CodePermissionDenied, errors.New("the sender is not the user the channel verified"))
	}
	res, err := h.App.HandleMessage(ctx, req)
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	return res, nil
}

// toConnect is the one place chat-mio's errors become Connect codes.
func (h *Handler) toConnect(ctx context.Context, err error) error {
	return rpcserver.ToConnect(ctx, h.Log, "chat", err)
}
