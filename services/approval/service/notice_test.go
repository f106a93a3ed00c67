package service_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/approvaltest"
)

// recordingGateway is a gateway's push API that records what it is asked to deliver.
type recordingGateway struct {
	gatewayv1connect.UnimplementedNotificationServiceHandler
	mu     sync.Mutex
	pushes []*gatewayv1.PushRequest
}

func (g *recordingGateway) Push(_ context.Context, req *gatewayv1.PushRequest) (*gatewayv1.PushResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pushes = append(g.pushes, req)
	return &gatewayv1.PushResponse{Delivered: int32(len(req.GetMessages()))}, nil
}

func (g *recordingGateway) seen() []*gatewayv1.PushRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*gatewayv1.PushRequest(nil), g.pushes...)
}

// serveGateway runs g as gateway-line's internal listener, checking callers as the real one does.
func serveGateway(t *testing.T, g *recordingGateway) string {
	t.Helper()
	tel, err := telemetry.New(context.Background(), telemetry.Config{ServiceName: svcauth.GatewayLine, LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ln := testinfra.Listen(t)
	srv, err := rpcserver.New(rpcserver.Config{Name: svcauth.GatewayLine, Listener: ln, Credentials: testinfra.Credentials(t, svcauth.GatewayLine),
		Heartbeat: &rpcserver.Heartbeat{Interval: time.Minute}}, tel)
	if err != nil {
		t.Fatal(err)
	}
	srv.Mount(gatewayv1connect.NewNotificationServiceHandler(g, srv.HandlerOptions()...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-srv.Ready()
	return testinfra.URL(ln)
}

// TestRequesterIsToldThroughTheGateway: approval tells the requester's LINE chat, through the
// gateway's push API (as approval, which the gateway lets push), once when another chat decides
// the job; a decision in the requester's own chat is answered there and pushes nothing. (Expiry
// is told the same way: the app's tests and the e2e suite show it.)
func TestRequesterIsToldThroughTheGateway(t *testing.T) {
	gw := &recordingGateway{}
	gwURL := serveGateway(t, gw)
	s := approvaltest.Start(t, approvaltest.WithApprovers("line", "Uowner"), approvaltest.WithApprovers("slack", "Ulead"),
		approvaltest.WithGateways(gwURL, ""))
	ctx := t.Context()
	owner := &commonv1.Actor{Id: "Uowner", Channel: "line"}
	const chat = "line:Uowner"
	request := func(id string) {
		t.Helper()
		if _, err := s.Client.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{
			Proposal:  &commonv1.Proposal{JobId: id, Plan: "add a guide", Patch: `[{"type":"file_edit","action":"create","target":"docs/guide.md","content":"# Guide\n"}]`},
			SessionId: chat, Channel: "line", RequestedBy: owner, Locale: "ja"}); err != nil {
			t.Fatal(err)
		}
	}
	request("job_20260101_001")
	request("job_20260101_002")
	// In the requester's chat: the reply there is the answer.
	if _, err := s.Client.Approve(ctx, &approvalv1.ApproveRequest{JobId: "job_20260101_001", Actor: owner, SessionId: chat}); err != nil {
		t.Fatal(err)
	}
	// From the team's Slack thread: the requester's chat is told.
	if _, err := s.Client.Deny(ctx, &approvalv1.DenyRequest{JobId: "job_20260101_002", Actor: &commonv1.Actor{Id: "Ulead", Channel: "slack"},
		Reason: "not now", SessionId: "slack:C1:1.0"}); err != nil {
		t.Fatal(err)
	}
	// The notice owed for job_20260101_001, had there been one, was due first.
	testinfra.Eventually(t, 20*time.Second, "the notice", func() bool { return len(gw.seen()) > 0 })
	got := gw.seen()
	if len(got) != 1 {
		t.Fatalf("%d pushes, want 1: %v", len(got), got)
	}
	p := got[0]
	text := p.GetMessages()[0].GetText()
	if p.GetSessionId() != chat || p.GetJobId() != "job_20260101_002" || p.GetRetryKey() != "job_20260101_002:decision" ||
		!strings.Contains(text, "slack:Ulead が却下しました") || !strings.Contains(text, "理由: not now") {
		t.Errorf("push %v", p)
	}
}
