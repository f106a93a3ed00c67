package rpcserver_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

func TestHealthReadinessMetricsAndBodyLimit(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: "t", LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv, err := rpcserver.New(rpcserver.Config{Name: "t", Listener: ln, MaxBodyBytes: 64, Credentials: testinfra.Credentials(t, svcauth.RouterShiro)}, tel)
	if err != nil {
		t.Fatal(err)
	}
	ready := errors.New("redis down")
	srv.AddReadiness("redis", func(context.Context) error { return ready })
	srv.Mount(routerv1connect.NewRouterServiceHandler(routerv1connect.UnimplementedRouterServiceHandler{}, srv.HandlerOptions()...))
	srv.HandleHTTP(http.MethodPost, "/echo", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
		}
	}))
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	<-srv.Ready()
	base := "http://" + ln.Addr().String()

	get := func(path string) (int, string) {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("/healthz = %d", code)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, `"redis":"unavailable"`) || strings.Contains(body, "redis down") {
		t.Fatalf("/readyz = %d %s", code, body)
	}
	ready = nil
	if code, _ := get("/readyz"); code != 200 {
		t.Fatalf("/readyz after recovery = %d", code)
	}
	res, err := http.Post(base+"/echo", "text/plain", strings.NewReader(strings.Repeat("x", 1000)))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %d", res.StatusCode)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, `picoclaw_http_requests_total{route="/healthz",service="t",status="200"}`) {
		t.Fatalf("/metrics = %d\n%s", code, body)
	}
	// Scrapes are answered uncompressed, whatever the scraper accepts.
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err = http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if enc := res.Header.Get("Content-Encoding"); enc != "" || !strings.Contains(string(body), "picoclaw_http_requests_total") {
		t.Fatalf("/metrics with gzip accepted: encoding %q, %d bytes", enc, len(body))
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (rpcserver.Config{}).Validate(); err == nil {
		t.Fatal("empty config accepted")
	}
	if err := (rpcserver.Config{Name: "x"}).Validate(); err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("missing listen: %v", err)
	}
}

func TestPprofOnlyWhenEnabled(t *testing.T) {
	for _, on := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: "t", LogWriter: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		srv, err := rpcserver.New(rpcserver.Config{Name: "t", Listener: ln, Pprof: on, Credentials: testinfra.Credentials(t, svcauth.RouterShiro)}, tel)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Run(ctx) }()
		<-srv.Ready()
		res, err := http.Get("http://" + ln.Addr().String() + "/debug/pprof/heap?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		served := res.StatusCode == http.StatusOK && strings.Contains(string(body), "heap profile")
		if served != on {
			t.Errorf("pprof=%v: /debug/pprof/heap = %d (served %v)", on, res.StatusCode, served)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// The internal /readyz names the failing dependency and a stable code, never its error text
// (hosts, users, database names): that goes to the log.
func TestReadyzHidesDependencyErrors(t *testing.T) {
	logs := &testinfra.SyncBuffer{}
	tel, err := telemetry.New(context.Background(), telemetry.Config{ServiceName: "svc", LogWriter: logs})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := rpcserver.New(rpcserver.Config{Name: "svc", Listener: ln, PublicListener: pub, Credentials: testinfra.Credentials(t, svcauth.Heartbeat)}, tel)
	if err != nil {
		t.Fatal(err)
	}
	srv.AddReadiness("postgres", func(context.Context) error {
		return errors.New("failed to connect to `user=picoclaw database=prod`: 10.1.2.3:5432: connection refused")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = srv.Run(ctx) }()
	<-srv.Ready()
	for range 2 {
		res, err := http.Get("http://" + ln.Addr().String() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"dependency_unavailable"`) ||
			!strings.Contains(string(body), `"postgres"`) || strings.Contains(string(body), "10.1.2.3") || strings.Contains(string(body), "database=") {
			t.Fatalf("%d %s", res.StatusCode, body)
		}
	}
	// The public listener's answer has the same stable code and names no dependency at all.
	res, err := http.Get("http://" + pub.Addr().String() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"code":"dependency_unavailable"`) ||
		strings.Contains(string(body), "postgres") || strings.Contains(string(body), "10.1.2.3") {
		t.Fatalf("public /readyz: %d %s", res.StatusCode, body)
	}
	if n := logs.Count("service.not_ready"); n != 1 || !strings.Contains(logs.String(), "10.1.2.3") {
		t.Fatalf("logged %d times:\n%s", n, logs.String())
	}
}
