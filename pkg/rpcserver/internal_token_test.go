package rpcserver_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"

	"connectrpc.com/connect"

	routerv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

type decider struct {
	routerv1connect.UnimplementedRouterServiceHandler
}

func (decider) Decide(context.Context, *routerv1.DecideRequest) (*routerv1.DecideResponse, error) {
	return &routerv1.DecideResponse{}, nil
}

func TestInternalTokenIsRequiredWhenConfigured(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: "t", LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv, err := rpcserver.New(rpcserver.Config{Name: "t", Listener: ln, InternalToken: "s3rvice-token-0123456789"}, tel)
	if err != nil {
		t.Fatal(err)
	}
	srv.Mount(routerv1connect.NewRouterServiceHandler(decider{}, srv.HandlerOptions()...))
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	<-srv.Ready()
	defer func() { cancel(); <-done }()
	url := "http://" + ln.Addr().String()

	for name, c := range map[string]struct {
		token string
		code  connect.Code
	}{
		"no token":    {"", connect.CodeUnauthenticated},
		"wrong token": {"not-the-token-000000000", connect.CodeUnauthenticated},
		"the token":   {"s3rvice-token-0123456789", 0},
	} {
		for _, proto := range []connect.ClientOption{connect.WithGRPC(), connect.WithProtoJSON()} {
			opts, err := rpcserver.ClientOptions(tel, 0, rpcserver.WithInternalToken(c.token), proto)
			if err != nil {
				t.Fatal(err)
			}
			client := routerv1connect.NewRouterServiceClient(rpcserver.NewHTTPClient(), url, opts...)
			_, err = client.Decide(ctx, &routerv1.DecideRequest{})
			if c.code == 0 && err != nil {
				t.Errorf("%s: %v", name, err)
			}
			if c.code != 0 && connect.CodeOf(err) != c.code {
				t.Errorf("%s: got %v, want %v", name, err, c.code)
			}
		}
	}
	// Health stays open for probes.
	res, err := http.Get(url + "/healthz")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("/healthz with a token configured: %v %v", res, err)
	}
	res.Body.Close()
}
