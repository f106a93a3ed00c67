package rpcserver_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// A request in flight when the shutdown starts is served to the end; new connections are
// refused from the start of the shutdown.
func TestShutdownLetsTheRequestInFlightFinish(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: "t", LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	started, release := make(chan struct{}), make(chan struct{})
	cfg := rpcserver.Config{Name: "t", Listener: ln, Credentials: testinfra.Credentials(t, svcauth.RouterShiro), ShutdownTimeout: 10 * time.Second}
	srv, done := runServer(t, ctx, cfg, tel, func(s *rpcserver.Server) {
		s.HandleHTTP(http.MethodGet, "/slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(started)
			<-release
			_, _ = io.WriteString(w, "finished")
		}))
	})
	got := make(chan string, 1)
	go func() {
		res, err := http.Get("http://" + srv.Addr().String() + "/slow")
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		got <- string(b)
	}()
	<-started
	cancel()
	select {
	case err := <-done:
		t.Fatalf("the server stopped with a request in flight: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if body := <-got; body != "finished" {
		t.Fatalf("the request in flight got %q", body)
	}
	<-done
	if _, err := net.DialTimeout("tcp", srv.Addr().String(), time.Second); err == nil {
		t.Error("the listener still accepts after the shutdown")
	}
}
