package rpcserver_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"connectrpc.com/connect"

	routerv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// The suite's client sends a unary call in the Connect protocol over HTTP/1.1 on a kept
// connection, and the gRPC protocol over h2c; both reach the same listener.
func TestUnaryConnectCallsGoOverHTTP1AndGRPCOverH2C(t *testing.T) {
	var (
		mu     sync.Mutex
		protos []int
		conns  = map[string]bool{}
	)
	_, h := routerv1connect.NewRouterServiceHandler(decider{decide: func(context.Context, *routerv1.DecideRequest) (*routerv1.DecideResponse, error) {
		return &routerv1.DecideResponse{}, nil
	}})
	srv := testinfra.H2CServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		protos = append(protos, r.ProtoMajor)
		conns[r.RemoteAddr] = true
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	call := func(opts ...connect.ClientOption) (proto, opened int) {
		t.Helper()
		c := routerv1connect.NewRouterServiceClient(rpcserver.NewHTTPClient(), srv.URL, opts...)
		for range 3 {
			if _, err := c.Decide(context.Background(), &routerv1.DecideRequest{Text: "hi"}); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for _, p := range protos[1:] {
			if p != protos[0] {
				t.Fatalf("protocols %v: one client, one protocol", protos)
			}
		}
		proto, n := protos[0], len(conns)
		protos, conns = nil, map[string]bool{}
		return proto, n
	}
	for name, opts := range map[string][]connect.ClientOption{"proto": nil, "json": {connect.WithProtoJSON()}} {
		if p, n := call(opts...); p != 1 || n != 1 {
			t.Errorf("Connect %s: HTTP/%d over %d connections, want HTTP/1 over one kept connection", name, p, n)
		}
	}
	if p, n := call(connect.WithGRPC()); p != 2 || n != 1 {
		t.Errorf("gRPC: HTTP/%d over %d connections, want HTTP/2 over one", p, n)
	}
}
