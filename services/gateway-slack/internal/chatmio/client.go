// Package chatmio calls chat-mio's ChatService and maps its messages to the gateway's types.
package chatmio

import (
	"context"
	"errors"
	"fmt"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/domain"
)

// Client adapts a ChatService client to app.Chat.
type Client struct {
	rpc chatv1connect.ChatServiceClient
}

var _ app.Chat = (*Client)(nil)

// New wraps rpc.
func New(rpc chatv1connect.ChatServiceClient) *Client { return &Client{rpc: rpc} }

// HandleMessage calls chat-mio. Codes that retrying cannot fix are domain.ErrPermanent.
func (c *Client) HandleMessage(ctx context.Context, req app.ChatRequest) (app.ChatResponse, error) {
	pb := &chatv1.HandleMessageRequest{
		SessionId: req.SessionID, Channel: "slack", UserId: req.UserID, Text: req.Text,
		EventId: req.EventID, ReceivedAt: timestamppb.New(req.ReceivedAt), Locale: req.Locale, IsGroup: req.IsGroup,
	}
	if req.Action != nil {
		pb.Action = ActionToProto(*req.Action)
	}
	res, err := c.rpc.HandleMessage(ctx, pb)
	if err != nil {
		if permanent(err) {
			return app.ChatResponse{}, fmt.Errorf("%w: %w", domain.ErrPermanent, err)
		}
		return app.ChatResponse{}, err
	}
	return app.ChatResponse{JobID: res.GetJobId(), Replies: RepliesFromProto(res.GetMessages()), AsyncPending: res.GetAsyncPending()}, nil
}

func permanent(err error) bool {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return false
	}
	switch ce.Code() {
	case connect.CodeInvalidArgument, connect.CodeNotFound, connect.CodeAlreadyExists,
		connect.CodePermissionDenied, connect.CodeFailedPrecondition, connect.CodeOutOfRange,
		connect.CodeUnimplemented, connect.CodeUnauthenticated:
		return true
	}
	return false
}

// RepliesFromProto maps reply messages (also used by the notification API).
func RepliesFromProto(msgs []*commonv1.ReplyMessage) []domain.Reply {
	out := make([]domain.Reply, 0, len(msgs))
	for _, m := range msgs {
		r := domain.Reply{Text: m.GetText(), JobID: m.GetJobId()}
		for _, a := range m.GetActions() {
			if k, ok := kindFromProto(a.GetKind()); ok {
				job := a.GetJobId()
				if job == "" {
					job = m.GetJobId()
				}
				r.Actions = append(r.Actions, domain.Action{Kind: k, JobID: job, Label: a.GetLabel(), Value: a.GetValue()})
			}
		}
		out = append(out, r)
	}
	return out
}

// ActionToProto maps a button press.
func ActionToProto(a domain.Action) *commonv1.Action {
	k := commonv1.ActionKind_ACTION_KIND_PICK
	switch a.Kind {
	case domain.ActionApprove:
		k = commonv1.ActionKind_ACTION_KIND_APPROVE
	case domain.ActionDeny:
		k = commonv1.ActionKind_ACTION_KIND_DENY
	}
	return &commonv1.Action{Kind: k, JobId: a.JobID, Value: a.Value}
}

func kindFromProto(k commonv1.ActionKind) (domain.ActionKind, bool) {
	switch k {
	case commonv1.ActionKind_ACTION_KIND_APPROVE:
		return domain.ActionApprove, true
	case commonv1.ActionKind_ACTION_KIND_DENY:
		return domain.ActionDeny, true
	case commonv1.ActionKind_ACTION_KIND_PICK:
		return domain.ActionPick, true
	}
	return "", false
}
