// Package chatlink is the gateways' link to chat-mio: the request, reply and button types the
// LINE and Slack gateways share, and the ChatService client that maps them to protobuf.
package chatlink

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

// ErrPermanent marks a failure that retrying will not fix.
var ErrPermanent = errors.New("permanent failure")

// ActionKind is what a button does.
type ActionKind string

// Button kinds (mirroring picoclaw.common.v1.ActionKind).
const (
	ActionApprove ActionKind = "approve"
	ActionDeny    ActionKind = "deny"
	ActionPick    ActionKind = "pick"
)

// Action is a button offered with a reply, or a button press.
type Action struct {
	Kind  ActionKind `json:"kind"`
	JobID string     `json:"job_id"`
	Label string     `json:"label,omitempty"`
	Value string     `json:"value,omitempty"`
	// Trace is the W3C traceparent of the job's trace when the button was sent; a press continues
	// that trace, so one job stays one trace across the wait for a person.
	Trace string `json:"trace,omitempty"`
}

// Reply is one message from chat-mio.
type Reply struct {
	Text    string
	Actions []Action
	JobID   string
}

// Request is one inbound event for chat-mio.
type Request struct {
	SessionID  string
	UserID     string
	Text       string
	Action     *Action
	EventID    string
	ReceivedAt time.Time
	Locale     string
	IsGroup    bool
}

// Response is chat-mio's answer.
type Response struct {
	JobID        string
	Replies      []Reply
	AsyncPending bool
}

// Client calls chat-mio's ChatService for one channel (line, slack).
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

// HandleMessage calls chat-mio. Codes that retrying cannot fix wrap ErrPermanent.
func (c *Client) HandleMessage(ctx context.Context, req Request) (Response, error) {
	pb := &chatv1.HandleMessageRequest{
		SessionId: req.SessionID, Channel: c.channel, UserId: req.UserID, Text: req.Text,
		EventId: req.EventID, ReceivedAt: timestamppb.New(req.ReceivedAt), Locale: req.Locale, IsGroup: req.IsGroup,
	}
	if req.Action != nil {
		pb.Action = ActionToProto(*req.Action)
	}
	// chat-mio acts for the sender only on the gateway's signed word for who that is.
	assertion, err := c.voucher.Vouch(c.channel, req.UserID, time.Now())
	if err != nil {
		return Response{}, fmt.Errorf("%w: %w", ErrPermanent, err)
	}
	ctx = svcauth.WithPrincipal(ctx, svcauth.Principal{Channel: c.channel, User: req.UserID, Raw: assertion})
	res, err := c.rpc.HandleMessage(ctx, pb)
	if err != nil {
		if permanent(err) {
			return Response{}, fmt.Errorf("%w: %w", ErrPermanent, err)
		}
		return Response{}, err
	}
	return Response{JobID: res.GetJobId(), Replies: RepliesFromProto(res.GetMessages()), AsyncPending: res.GetAsyncPending()}, nil
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
func RepliesFromProto(msgs []*commonv1.ReplyMessage) []Reply {
	out := make([]Reply, 0, len(msgs))
	for _, m := range msgs {
		r := Reply{Text: m.GetText(), JobID: m.GetJobId()}
		for _, a := range m.GetActions() {
			if k, ok := kindFromProto(a.GetKind()); ok {
				job := a.GetJobId()
				if job == "" {
					job = m.GetJobId()
				}
				r.Actions = append(r.Actions, Action{Kind: k, JobID: job, Label: a.GetLabel(), Value: a.GetValue()})
			}
		}
		out = append(out, r)
	}
	return out
}

// ActionToProto maps a button press.
func ActionToProto(a Action) *commonv1.Action {
	k := commonv1.ActionKind_ACTION_KIND_PICK
	switch a.Kind {
	case ActionApprove:
		k = commonv1.ActionKind_ACTION_KIND_APPROVE
	case ActionDeny:
		k = commonv1.ActionKind_ACTION_KIND_DENY
	}
	return &commonv1.Action{Kind: k, JobId: a.JobID, Value: a.Value}
}

func kindFromProto(k commonv1.ActionKind) (ActionKind, bool) {
	switch k {
	case commonv1.ActionKind_ACTION_KIND_APPROVE:
		return ActionApprove, true
	case commonv1.ActionKind_ACTION_KIND_DENY:
		return ActionDeny, true
	case commonv1.ActionKind_ACTION_KIND_PICK:
		return ActionPick, true
	}
	return "", false
}
