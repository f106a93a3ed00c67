package peertest

import (
	"context"

	"slices"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/approval/approvaltest"
)

// Job reads a job from approval.
func (s *Suite) Job(t testing.TB, id string) *approvalv1.Job {
	t.Helper()
	res, err := s.Approval.Client.GetJob(context.Background(), &approvalv1.GetJobRequest{JobId: id})
	if err != nil {
		t.Fatalf("approval GetJob %s: %v", id, err)
	}
	return res.GetJob()
}

// Events lists the types of a job's audit events; approval must find the chain intact.
func (s *Suite) Events(t testing.TB, id string) []string {
	t.Helper()
	res, err := s.Approval.Client.ListJobEvents(context.Background(), &approvalv1.ListJobEventsRequest{JobId: id})
	if err != nil {
		t.Fatalf("approval ListJobEvents %s: %v", id, err)
	}
	if !res.GetChainValid() {
		t.Fatalf("audit chain of %s does not verify", id)
	}
	var out []string
	for _, e := range res.GetEvents() {
		if e.GetJobId() != id {
			t.Fatalf("event %s of %s names job %q", e.GetType(), id, e.GetJobId())
		}
		out = append(out, e.GetType())
	}
	return out
}

// Suite is every peer of chat-mio, running: the real approval service and small fakes of the
// others.
type Suite struct {
	Approval  *approvaltest.Server
	Executor  *Executor
	Router    *Router
	Heartbeat *Heartbeat
	Gateway   *Gateway

	ExecutorSrv, RouterSrv, HeartbeatSrv, GatewaySrv *Server
	Workspace                                        string
}

// DocsPatch is the proposal every CODE message gets unless a test sets Router.Propose.
func DocsPatch(string) (string, commonv1.TaskType) {
	return Patch(PatchCommand{Type: "file_edit", Action: "create", Target: "docs/guide.md", Content: "# Guide\n"}),
		commonv1.TaskType_TASK_TYPE_DOCS
}

// Start runs the peers; approvers (LINE user ids) may approve and switch Auto-Approve on.
func Start(t testing.TB, approvers ...string) *Suite {
	t.Helper()
	s := &Suite{Router: &Router{Propose: DocsPatch}, Heartbeat: &Heartbeat{}, Gateway: NewGateway(), Workspace: t.TempDir()}
	s.GatewaySrv = Serve(t, "gateway-line", func(srv *rpcserver.Server) {
		srv.Mount(gatewayv1connect.NewNotificationServiceHandler(s.Gateway, srv.HandlerOptions()...))
	})
	// Approval tells a requester's LINE chat of decisions made elsewhere through this gateway.
	s.Approval = approvaltest.Start(t, approvaltest.WithApprovers("line", approvers...), approvaltest.WithAutoApprove(),
		approvaltest.WithGateways(s.GatewaySrv.URL, ""))
	s.ExecutorSrv = Serve(t, "executor", func(srv *rpcserver.Server) {
		opts, err := rpcserver.ClientOptions(srv.Telemetry(), 10*time.Second,
			svcauth.Client(testinfra.Credentials(t, svcauth.Executor), svcauth.Approval))
		if err != nil {
			t.Fatalf("client options: %v", err)
		}
		hc := rpcserver.NewHTTPClient()
		// Idle h2c connections would hold the approval server's graceful shutdown open.
		t.Cleanup(hc.CloseIdleConnections)
		s.Executor = &Executor{Workspace: s.Workspace,
			Approval: approvalv1connect.NewApprovalServiceClient(hc, s.Approval.URL, opts...)}
		srv.Mount(executorv1connect.NewExecutorServiceHandler(s.Executor, srv.HandlerOptions()...))
	})
	s.RouterSrv = Serve(t, "router-shiro", func(srv *rpcserver.Server) {
		srv.Mount(routerv1connect.NewRouterServiceHandler(s.Router, srv.HandlerOptions()...))
	})
	s.HeartbeatSrv = Serve(t, "heartbeat", func(srv *rpcserver.Server) {
		srv.Mount(heartbeatv1connect.NewHeartbeatServiceHandler(s.Heartbeat, srv.HandlerOptions()...))
	})
	return s
}

// Clients are Connect clients of the peers that propagate trace context and baggage with tel.
type Clients struct {
	Router    routerv1connect.RouterServiceClient
	Approval  approvalv1connect.ApprovalServiceClient
	Executor  executorv1connect.ExecutorServiceClient
	Heartbeat heartbeatv1connect.HeartbeatServiceClient
	Gateway   gatewayv1connect.NotificationServiceClient
}

// Clients builds clients that carry tel's propagation.
func (s *Suite) Clients(t testing.TB, tel *telemetry.Telemetry) Clients {
	t.Helper()
	base, err := rpcserver.ClientOptions(tel, 30*time.Second)
	if err != nil {
		t.Fatalf("client options: %v", err)
	}
	// The app under test is chat-mio; calls that act for a person carry that person's assertion.
	opts := func(target string) []connect.ClientOption {
		return append(slices.Clip(base), testinfra.AsSuite(t, target))
	}
	hc := rpcserver.NewHTTPClient()
	t.Cleanup(hc.CloseIdleConnections)
	return Clients{
		Router:    routerv1connect.NewRouterServiceClient(hc, s.RouterSrv.URL, opts(svcauth.RouterShiro)...),
		Approval:  approvalv1connect.NewApprovalServiceClient(hc, s.Approval.URL, opts(svcauth.Approval)...),
		Executor:  executorv1connect.NewExecutorServiceClient(hc, s.ExecutorSrv.URL, opts(svcauth.Executor)...),
		Heartbeat: heartbeatv1connect.NewHeartbeatServiceClient(hc, s.HeartbeatSrv.URL, opts(svcauth.Heartbeat)...),
		Gateway:   gatewayv1connect.NewNotificationServiceClient(hc, s.GatewaySrv.URL, opts(svcauth.GatewayLine)...),
	}
}
