// Package peertest runs in-process Connect servers of chat-mio's peers for tests: approval,
// executor, router-shiro, heartbeat and a gateway. They are served by the suite's real
// rpcserver (h2c, otelconnect with trusted baggage, JSON logs with job_id) and behave like the
// real services per SPEC §4–§9 in the parts chat-mio relies on.
package peertest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// Server is one running peer.
type Server struct {
	URL  string
	Logs *testinfra.SyncBuffer
	Tel  *telemetry.Telemetry
}

// Serve starts a peer named name on a loopback port with debug logging; mount registers its
// handlers. It stops when the test ends.
func Serve(t testing.TB, name string, mount func(*rpcserver.Server)) *Server {
	t.Helper()
	logs := &testinfra.SyncBuffer{}
	tel, err := telemetry.New(context.Background(), telemetry.Config{ServiceName: name, LogLevel: "debug", LogWriter: logs})
	if err != nil {
		t.Fatalf("telemetry %s: %v", name, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen %s: %v", name, err)
	}
	// Peers do not beat: no heartbeat service runs here, and the failed beats would be logged
	// without a job id in the middle of the lines tests inspect.
	// name is the identity the peer plays; its server checks callers as the real one does.
	srv, err := rpcserver.New(rpcserver.Config{Name: name, Listener: ln, Heartbeat: &rpcserver.Heartbeat{Interval: time.Minute},
		Credentials: testinfra.Credentials(t, name)}, tel)
	if err != nil {
		t.Fatalf("server %s: %v", name, err)
	}
	mount(srv)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	<-srv.Ready()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = tel.Shutdown(context.Background())
	})
	return &Server{URL: "http://" + ln.Addr().String(), Logs: logs, Tel: tel}
}
