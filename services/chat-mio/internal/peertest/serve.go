// Package peertest runs in-process Connect servers of chat-mio's peers for tests: approval,
// executor, router-shiro, heartbeat and a gateway. They are served by the suite's real
// rpcserver (h2c, otelconnect with trusted baggage, JSON logs with job_id) and behave like the
// real services per SPEC §4–§9 in the parts chat-mio relies on.
package peertest

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// LogBuffer collects a service's JSON log lines.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Lines returns the decoded log lines.
func (b *LogBuffer) Lines() []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return JSONLines(b.buf.String())
}

// JSONLines decodes a JSON log.
func JSONLines(log string) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(log, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// Server is one running peer.
type Server struct {
	URL  string
	Logs *LogBuffer
	Tel  *telemetry.Telemetry
}

// Serve starts a peer named name on a loopback port with debug logging; mount registers its
// handlers. It stops when the test ends.
func Serve(t testing.TB, name string, mount func(*rpcserver.Server)) *Server {
	t.Helper()
	logs := &LogBuffer{}
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
