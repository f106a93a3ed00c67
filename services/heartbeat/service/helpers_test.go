package service_test

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"

	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/service"
)

// fakeGateway is a gateway NotificationService that records every push.
type fakeGateway struct {
	gatewayv1connect.UnimplementedNotificationServiceHandler
	mu     sync.Mutex
	pushes []*gatewayv1.PushRequest
	URL    string
}

func (g *fakeGateway) Push(_ context.Context, req *gatewayv1.PushRequest) (*gatewayv1.PushResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pushes = append(g.pushes, req)
	return &gatewayv1.PushResponse{Delivered: int32(len(req.GetMessages()))}, nil
}

func (g *fakeGateway) Pushes() []*gatewayv1.PushRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*gatewayv1.PushRequest(nil), g.pushes...)
}

func startFakeGateway(t *testing.T) *fakeGateway {
	t.Helper()
	g := &fakeGateway{}
	mux := http.NewServeMux()
	mux.Handle(gatewayv1connect.NewNotificationServiceHandler(g))
	g.URL = testinfra.H2CServer(t, mux).URL
	return g
}

// testCommon is the suite config for a test: isolated Redis keys, the given beat interval and
// timeout.
func testCommon(t *testing.T, interval, timeout int) config.Common {
	t.Helper()
	rdb := testinfra.Redis(t)
	c := config.DefaultCommon()
	c.Redis.Addr = rdb.Addr
	c.Redis.KeyPrefix = rdb.Prefix
	c.HeartbeatSender = config.Heartbeat{Enabled: true, IntervalSec: interval, TimeoutSec: timeout}
	c.Auth = testinfra.Auth(service.Name)
	return c
}

// running is a heartbeat service started by a test.
type running struct {
	URL  string
	stop func()
}

// startHeartbeat runs service.Run on ln until the test ends or stop is called.
func startHeartbeat(t *testing.T, cfg service.Config, ln net.Listener) *running {
	t.Helper()
	cfg.Listener = ln
	url := testinfra.URL(ln)
	stop := testinfra.Serve(t, service.Name, url+"/readyz", func(ctx context.Context) error { return service.Run(ctx, cfg) })
	return &running{URL: url, stop: stop}
}

func hbClient(t testing.TB, url string) heartbeatv1connect.HeartbeatServiceClient {
	return heartbeatv1connect.NewHeartbeatServiceClient(rpcserver.NewHTTPClient(), url, testinfra.AsSuite(t, svcauth.Heartbeat))
}
