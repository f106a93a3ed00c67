// Package approvaltest runs the real approval service in-process for other modules' tests, the
// way the embedded suite runs it: the SQLite audit store in a temporary directory, an embedded
// Redis for the Auto-Approve grant and the suite's test credentials. Tests of chat-mio and the
// executor talk to it over Connect instead of re-implementing approval's rules.
package approvaltest

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/embedredis"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/service"
)

// AuditKey seals the audit log of a test instance (only tests use it).
const AuditKey = "approvaltest-audit-key-0123456789abcdef"

// Option adjusts the configuration before the service starts.
type Option func(*service.Config)

// WithApprovers adds ids to the approvers of channel ("line", "slack" or "cli").
func WithApprovers(channel string, ids ...string) Option {
	return func(c *service.Config) {
		a := &c.Approval.Approvers
		switch channel {
		case "line":
			a.Line = append(a.Line, ids...)
		case "slack":
			a.Slack = append(a.Slack, ids...)
		case "cli":
			a.CLI = append(a.CLI, ids...)
		}
	}
}

// WithAutoApprove allows approvers to switch Auto-Approve on (off by default, as in production).
func WithAutoApprove() Option {
	return func(c *service.Config) { c.Approval.AutoApprove.Enabled = true }
}

// WithPendingTTL makes pending jobs expire after ttl, swept every sweep.
func WithPendingTTL(ttl, sweep time.Duration) Option {
	return func(c *service.Config) { c.Approval.PendingTTL, c.Approval.SweepInterval = ttl, sweep }
}

// WithConfig changes anything else.
func WithConfig(f func(*service.Config)) Option { return Option(f) }

// Server is a running approval service.
type Server struct {
	// URL is the internal (Connect) listener.
	URL string
	// PublicURL is the REST API and console listener.
	PublicURL string
	// Logs holds its JSON log.
	Logs *testinfra.SyncBuffer
	// Client calls it as the rest of the suite would (testinfra.AsSuite): chat-mio for the
	// conversation's calls, the executor for claims and reports, with the named person's
	// assertion.
	Client approvalv1connect.ApprovalServiceClient
}

// Start runs approval until the test ends. It fails the test when the service does not become
// ready or does not stop cleanly.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	rdb, err := embedredis.Start(ctx, "127.0.0.1:0", "")
	if err != nil {
		cancel()
		t.Fatalf("approvaltest: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		rdb.Close()
		t.Fatalf("approvaltest: listen: %v", err)
	}
	pub, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		rdb.Close()
		_ = ln.Close()
		t.Fatalf("approvaltest: listen: %v", err)
	}
	cfg := service.DefaultConfig()
	cfg.Auth = testinfra.Auth(service.Name)
	cfg.LogLevel = "debug"
	cfg.HeartbeatSender.Enabled = false
	cfg.Redis.Addr = rdb.Addr()
	cfg.Approval.Store = service.StoreSQLite
	cfg.Approval.SQLitePath = filepath.Join(t.TempDir(), "audit.db")
	cfg.Approval.Audit.Key = config.Secret(AuditKey)
	cfg.Listener, cfg.PublicListener = ln, pub
	cfg.Services.Approval = config.Endpoint{Listen: ln.Addr().String(), URL: "http://" + ln.Addr().String(),
		PublicListen: pub.Addr().String(), PublicURL: "http://" + pub.Addr().String()}
	logs := &testinfra.SyncBuffer{}
	cfg.LogWriter = logs
	for _, o := range opts {
		o(&cfg)
	}
	done := make(chan error, 1)
	go func() { done <- service.Run(ctx, cfg) }()
	hc := rpcserver.NewHTTPClient()
	t.Cleanup(func() {
		// Idle client connections would hold the graceful shutdown open.
		hc.CloseIdleConnections()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("approvaltest: Run: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("approvaltest: approval did not stop")
		}
		rdb.Close()
	})
	s := &Server{URL: cfg.Services.Approval.URL, PublicURL: cfg.Services.Approval.PublicURL, Logs: logs}
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-done:
			done <- err // for the cleanup
			t.Fatalf("approvaltest: approval stopped before it was ready: %v\n%s", err, logs.String())
		default:
		}
		res, err := hc.Get(s.URL + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("approvaltest: approval not ready: %v\n%s", err, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Client = approvalv1connect.NewApprovalServiceClient(hc, s.URL, testinfra.AsSuite(t, svcauth.Approval))
	return s
}
