package chatclient

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"connectrpc.com/connect"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

type fakeChat struct {
	chatv1connect.UnimplementedChatServiceHandler
	got  *chatv1.HandleMessageRequest
	fail error
}

func (f *fakeChat) HandleMessage(_ context.Context, req *chatv1.HandleMessageRequest) (*chatv1.HandleMessageResponse, error) {
	f.got = req
	if f.fail != nil {
		return nil, f.fail
	}
	return &chatv1.HandleMessageResponse{JobId: "job_20261121_004", Messages: []*commonv1.ReplyMessage{{
		Text: "承認しますか", JobId: "job_20261121_004",
		Actions: []*commonv1.Action{{Kind: commonv1.ActionKind_ACTION_KIND_APPROVE, Label: "承認"},
			{Kind: commonv1.ActionKind_ACTION_KIND_UNSPECIFIED}},
	}}, TraceParent: jobTrace}, nil
}

// jobTrace is the job's trace chat-mio's turn ran in.
const jobTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestHandleMessageOverConnect(t *testing.T) {
	fake := &fakeChat{}
	_, h := chatv1connect.NewChatServiceHandler(fake)
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := New(chatv1connect.NewChatServiceClient(srv.Client(), srv.URL), "slack", testinfra.Credentials(t, svcauth.GatewaySlack))

	res, err := c.HandleMessage(context.Background(), chatlink.Request{SessionID: "slack:C1:1.2", UserID: "U1",
		Action: &chatlink.Action{Kind: chatlink.ActionDeny, JobID: "job_20261121_003"}})
	if err != nil {
		t.Fatal(err)
	}
	if fake.got.GetChannel() != "slack" || fake.got.GetAction().GetKind() != commonv1.ActionKind_ACTION_KIND_DENY {
		t.Fatalf("request = %v", fake.got)
	}
	if len(res.Replies) != 1 || len(res.Replies[0].Actions) != 1 {
		t.Fatalf("replies = %+v (unknown button kinds must be dropped)", res.Replies)
	}
	if a := res.Replies[0].Actions[0]; a.Kind != chatlink.ActionApprove || a.JobID != "job_20261121_004" {
		t.Fatalf("action = %+v (job id falls back to the message's)", a)
	}
	if res.TraceParent != jobTrace {
		t.Fatalf("trace parent %q, want the job's %q", res.TraceParent, jobTrace)
	}

	for code, perm := range map[connect.Code]bool{connect.CodeInvalidArgument: true, connect.CodeUnavailable: false, connect.CodeInternal: false} {
		fake.fail = connect.NewError(code, errors.New("x"))
		_, err := c.HandleMessage(context.Background(), chatlink.Request{SessionID: "slack:C1:1.2", UserID: "U1"})
		if errors.Is(err, chatlink.ErrPermanent) != perm {
			t.Errorf("%v: permanent=%v, want %v", code, errors.Is(err, chatlink.ErrPermanent), perm)
		}
	}
}
