package rpcserver_test

import (
	"context"
	"errors"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

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
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "redis down") {
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
