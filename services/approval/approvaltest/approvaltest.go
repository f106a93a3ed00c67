// Package approvaltest runs the real approval service in-process for other modules' tests, the
// way the embedded suite runs it: the SQLite audit store in a temporary directory, an embedded
// Redis for the Auto-Approve grant and the suite's test credentials. Tests of chat-mio and the
// executor talk to it over Connect instead of re-implementing approval's rules.
package approvaltest

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
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

// WithGateways points the push path (requester notices) at the gateways serving LINE and Slack
// sessions; "" leaves a channel's default.
func WithGateways(line, slack string) Option {
	return func(c *service.Config) {
		if line != "" {
			c.Services.GatewayLine.URL = line
		}
		if slack != "" {
			c.Services.GatewaySlack.URL = slack
		}
	}
}

// WithClaimLease makes executors' claims lapse after d without a renewal.
func WithClaimLease(d time.Duration) Option {
	return func(c *service.Config) { c.Approval.ClaimLease = d }
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
	ln, pub := testinfra.Listen(t), testinfra.Listen(t)
	dir := t.TempDir()
	cfg := service.DefaultConfig()
	cfg.Auth = testinfra.Auth(service.Name)
	cfg.LogLevel = "debug"
	cfg.HeartbeatSender.Enabled = false
	// The embedded engines: the Auto-Approve grant in an SQLite state file, the audit log in
	// another; no Redis or Postgres.
	cfg.State = config.State{Engine: config.StateSQLite, Path: filepath.Join(dir, "state.db"), Sync: "normal"}
	cfg.Approval.Store = service.StoreSQLite
	cfg.Approval.SQLitePath = filepath.Join(dir, "audit.db")
	cfg.Approval.Audit.Key = config.Secret(AuditKey)
	cfg.Listener, cfg.PublicListener = ln, pub
	cfg.Services.Approval = config.Endpoint{Listen: ln.Addr().String(), URL: testinfra.URL(ln),
		PublicListen: pub.Addr().String(), PublicURL: testinfra.URL(pub)}
	logs := &testinfra.SyncBuffer{}
	cfg.LogWriter = logs
	for _, o := range opts {
		o(&cfg)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("approval log:\n%s", logs.String())
		}
	})
	s := &Server{URL: cfg.Services.Approval.URL, PublicURL: cfg.Services.Approval.PublicURL, Logs: logs}
	testinfra.Serve(t, service.Name, s.URL+"/readyz", func(ctx context.Context) error { return service.Run(ctx, cfg) })
	hc := rpcserver.NewHTTPClient()
	// Idle client connections would hold the graceful shutdown open.
	t.Cleanup(hc.CloseIdleConnections)
	s.Client = approvalv1connect.NewApprovalServiceClient(hc, s.URL, testinfra.AsSuite(t, svcauth.Approval))
	return s
}

// StartFromEnv runs approval configured the way a deployment configures it: the defaults, then
// env as the process environment (PICOCLAW_* variables), on SQLite in a temporary directory and
// the test Redis (testinfra.Redis), logging warnings only. env may override any of these. It
// returns the internal (Connect) and the public (REST, console) base URLs.
func StartFromEnv(t testing.TB, env map[string]string) (internal, public string) {
	t.Helper()
	rdb := testinfra.Redis(t)
	all := map[string]string{
		"PICOCLAW_APPROVAL_STORE":       "sqlite",
		"PICOCLAW_APPROVAL_SQLITE_PATH": filepath.Join(t.TempDir(), "audit.db"),
		"PICOCLAW_REDIS_ADDR":           rdb.Addr,
		"PICOCLAW_REDIS_KEY_PREFIX":     rdb.Prefix,
		"PICOCLAW_LOG_LEVEL":            "warn",
	}
	for k, v := range env {
		all[k] = v
	}
	cfg := service.DefaultConfig()
	if err := config.ApplyEnv(&cfg, func(k string) (string, bool) { v, ok := all[k]; return v, ok }); err != nil {
		t.Fatalf("approvaltest: %v", err)
	}
	ln, pub := testinfra.Listen(t), testinfra.Listen(t)
	cfg.Listener, cfg.PublicListener, cfg.LogWriter = ln, pub, io.Discard
	cfg.Auth = testinfra.Auth(service.Name)
	testinfra.Serve(t, service.Name, testinfra.URL(pub)+"/readyz", func(ctx context.Context) error { return service.Run(ctx, cfg) })
	return testinfra.URL(ln), testinfra.URL(pub)
}

// REST calls approval's REST API as the approver whose bearer token is token (a JSON body when
// body is not empty) and fails the test unless the answer is 200 OK.
func REST(t testing.TB, token, method, url, body string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %s", method, url, resp.Status)
	}
}
