package rpcserver_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	routerv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"

	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// A client that sends its body a byte a second is cut off at the body limit while another
// client is served; a slow handler that has read its body is not cut off by that limit.
func TestSlowBodyIsCutOffWhileOthersAreServed(t *testing.T) {
	_, pub := serve(t, rpcserver.Limits{BodyTimeout: 1 * time.Second, ReadHeaderTimeout: time.Second}, true, func(srv *rpcserver.Server) {
		srv.HandlePublic(http.MethodPost, "/hook", http.HandlerFunc(hook))
	})
	base := "http://" + pub.String()

	// The trickling client: a raw connection that sends one body byte per second.
	conn, err := net.Dial("tcp", pub.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
	cut := make(chan time.Duration, 1)
	start := time.Now()
	go func() {
		for i := 0; i < 100; i++ {
			if _, err := conn.Write([]byte("a")); err != nil {
				break
			}
			time.Sleep(time.Second)
		}
	}()
	go func() {
		buf := make([]byte, 512)
		for {
			if _, err := conn.Read(buf); err != nil {
				cut <- time.Since(start)
				return
			}
		}
	}()

	// Meanwhile another client is served, and a handler slower than the body limit completes.
	for _, body := range []string{"fast", "slow-handler"} {
		res, err := http.Post(base+"/hook", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", body, res.StatusCode, b)
		}
	}
	select {
	case d := <-cut:
		t.Logf("trickling client cut off after %v", d.Round(100*time.Millisecond))
	case <-time.After(30 * time.Second):
		t.Fatal("the trickling client was never cut off")
	}
}

// hook reads its body; "slow-handler" then takes longer than the body limit.
func hook(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "body: "+err.Error(), http.StatusRequestTimeout)
		return
	}
	if string(b) == "slow-handler" {
		time.Sleep(1500 * time.Millisecond) // longer than the body limit, after the body
	}
	fmt.Fprintf(w, "got %d bytes", len(b))
}

// serve runs a test server as router-shiro's identity (public listener when public) until the
// test ends; mount adds its routes before it starts.
func serve(t *testing.T, limits rpcserver.Limits, public bool, mount func(*rpcserver.Server)) (internal, pub net.Addr) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: "t", LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	cfg := rpcserver.Config{Name: "t", Listener: ln, Credentials: testinfra.Credentials(t, svcauth.RouterShiro), Limits: limits}
	if public {
		cfg.PublicListener, _ = net.Listen("tcp", "127.0.0.1:0")
	}
	srv, done := runServer(t, ctx, cfg, tel, mount)
	t.Cleanup(func() { cancel(); <-done })
	return srv.Addr(), srv.PublicAddr()
}

// runServer starts a server of cfg with mount's routes and waits until it is ready; done
// receives what Run returns.
func runServer(t testing.TB, ctx context.Context, cfg rpcserver.Config, tel *telemetry.Telemetry, mount func(*rpcserver.Server)) (srv *rpcserver.Server, done chan error) {
	t.Helper()
	srv, err := rpcserver.New(cfg, tel)
	if err != nil {
		t.Fatal(err)
	}
	mount(srv)
	done = make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	<-srv.Ready()
	return srv, done
}

// The public listener serves only what was registered on it: no Connect API, no metrics.
func TestPublicListenerServesOnlyItsRoutes(t *testing.T) {
	_, pub := serve(t, rpcserver.Limits{}, true, func(*rpcserver.Server) {})
	for path, want := range map[string]int{"/healthz": 200, "/metrics": 404, "/debug/pprof/": 404, "/grpc.health.v1.Health/Check": 404} {
		res, err := http.Get("http://" + pub.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("public %s: %d, want %d", path, res.StatusCode, want)
		}
	}
}

// A call without a valid token is refused before its body is read, in every protocol.
func TestUnauthenticatedCallRefusedBeforeItsBody(t *testing.T) {
	ctx := context.Background()
	ln, _ := serve(t, rpcserver.Limits{}, false, func(srv *rpcserver.Server) {
		srv.Mount(routerv1connect.NewRouterServiceHandler(routerv1connect.UnimplementedRouterServiceHandler{}, srv.HandlerOptions()...))
	})

	// Headers announce a megabyte; only a few bytes follow. The answer comes anyway.
	conn, err := net.Dial("tcp", ln.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"a\":", routerv1connect.RouterServiceDecideProcedure)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	status := make([]byte, 12)
	if _, err := io.ReadFull(conn, status); err != nil || string(status) != "HTTP/1.1 401" {
		t.Fatalf("status %q, %v", status, err)
	}
	for _, proto := range []connect.ClientOption{connect.WithGRPC(), connect.WithGRPCWeb(), connect.WithProtoJSON()} {
		c := routerv1connect.NewRouterServiceClient(rpcserver.NewHTTPClient(), "http://"+ln.String(), proto)
		if _, err := c.Decide(ctx, &routerv1.DecideRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Errorf("no token: %v", err)
		}
		// A valid identity the matrix does not allow for Decide.
		c = routerv1connect.NewRouterServiceClient(rpcserver.NewHTTPClient(), "http://"+ln.String(), proto,
			svcauth.Client(testinfra.Credentials(t, svcauth.Executor), svcauth.RouterShiro))
		if _, err := c.Decide(ctx, &routerv1.DecideRequest{}); connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("executor calling Decide: %v", err)
		}
	}
}

// One client cannot hold every connection of the public listener: beyond its share, its new
// connections are closed, and another client is still served.
func TestOneClientCannotTakeEveryPublicConnection(t *testing.T) {
	_, pub := serve(t, rpcserver.Limits{}, true, func(*rpcserver.Server) {})
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := 0; i < 80; i++ {
		c, err := net.Dial("tcp", pub.String())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// Connections are accepted in order: the ones over the share are closed without a word.
	closed := 0
	for _, c := range held[64:] {
		_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == io.EOF {
			closed++
		}
	}
	if closed != 80-64 {
		t.Fatalf("%d of the 16 connections over the share closed", closed)
	}
	// The client's share frees up as soon as it lets go (the reads above stay well within the
	// header timeout, which would otherwise close the idle ones).
	for _, c := range held {
		c.Close()
	}
	held = nil
	time.Sleep(100 * time.Millisecond)
	res, err := http.Get("http://" + pub.String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("healthz after the flood: %d", res.StatusCode)
	}
}
