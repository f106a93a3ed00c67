// Package chatclient is the channels' ChatService client: it maps chatlink requests to protobuf,
// vouches for the sender and classifies chat-mio's errors (permanent or worth a retry).
package chatclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

// Client calls chat-mio's ChatService for one channel (line, slack, cli).
type Client struct {
	rpc     chatv1connect.ChatServiceClient
	channel string
	voucher Voucher
}

// Voucher signs the assertion that a user is who the channel verified (svcauth.Credentials).
type Voucher interface {
	Vouch(channel, user string, now time.Time) (string, error)
}

// New wraps rpc for the channel.
func New(rpc chatv1connect.ChatServiceClient, channel string, voucher Voucher) *Client {
	return &Client{rpc: rpc, channel: channel, voucher: voucher}
}

// HandleMessage calls chat-mio. Codes that retrying cannot fix wrap chatlink.ErrPermanent.
func (c *Client) HandleMessage(ctx context.Context, req chatlink.Request) (chatlink.Response, error) {
	pb := &chatv1.HandleMessageRequest{
		SessionId: req.SessionID, Channel: c.channel, UserId: req.UserID, Text: req.Text,
		EventId: req.EventID, ReceivedAt: timestamppb.New(req.ReceivedAt), Locale: req.Locale, IsGroup: req.IsGroup,
	}
	if req.Action != nil {
		pb.Action = chatlink.ActionToProto(*req.Action)
	}
	if req.Image != nil {
		pb.Image = &chatv1.Image{Data: req.Image.Data, MimeType: req.Image.MIMEType, Source: req.Image.Source}
	}
	// chat-mio acts for the sender only on the gateway's signed word for who that is.
	assertion, err := c.voucher.Vouch(c.channel, req.UserID, time.Now())
	if err != nil {
		return chatlink.Response{}, fmt.Errorf("%w: %w", chatlink.ErrPermanent, err)
	}
	ctx = svcauth.WithPrincipal(ctx, svcauth.Principal{Channel: c.channel, User: req.UserID, Raw: assertion})
	res, err := c.rpc.HandleMessage(ctx, pb)
	if err != nil {
		if permanent(err) {
			return chatlink.Response{}, fmt.Errorf("%w: %w", chatlink.ErrPermanent, err)
		}
		return chatlink.Response{}, err
	}
	return chatlink.Response{JobID: res.GetJobId(), Replies: chatlink.RepliesFromProto(res.GetMessages()), AsyncPending: res.GetAsyncPending(),
		ActionApplied: res.GetActionApplied(), TraceParent: res.GetTraceParent()}, nil
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
