package app_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid/redisalloc"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/peers"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/peertest"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/store"
)

// fakeModel is Mio's chat model at the app level: it records prompts and answers a fixed text.
type fakeModel struct {
	mu    sync.Mutex
	reqs  []llm.Request
	reply string
	err   error
}

func (m *fakeModel) Chat(_ context.Context, req llm.Request) (*llm.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs = append(m.reqs, req)
	if m.err != nil {
		return nil, m.err
	}
	return &llm.Response{Text: m.reply, Provider: "ollama", Model: "chat-v1:latest", Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}, nil
}
func (m *fakeModel) Provider() string { return "ollama" }
func (m *fakeModel) Model() string    { return "chat-v1:latest" }
func (m *fakeModel) Cloud() bool      { return false }

func (m *fakeModel) calls() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Request(nil), m.reqs...)
}

const (
	approver = "Uapprover"
	stranger = "Ustranger"
	session  = "line:Uapprover"
)

type env struct {
	app   *app.App
	peers *peertest.Suite
	model *fakeModel
	logs  *testinfra.SyncBuffer
	rdb   *redis.Client
	// prefix is the key prefix of the env's state in rdb.
	prefix string
	store  *store.Redis
	now    func() time.Time
}

type envOpt func(*app.Config, *envSetup)

type envSetup struct {
	redisDown, approvalDown bool
	// logLevel is chat-mio's log level; default debug.
	logLevel string
}

func withConfig(f func(*app.Config)) envOpt { return func(c *app.Config, _ *envSetup) { f(c) } }
func withRedisDown() envOpt                 { return func(_ *app.Config, s *envSetup) { s.redisDown = true } }
func withApprovalDown() envOpt              { return func(_ *app.Config, s *envSetup) { s.approvalDown = true } }
func withLogLevel(l string) envOpt          { return func(_ *app.Config, s *envSetup) { s.logLevel = l } }

func newEnv(t *testing.T, opts ...envOpt) *env {
	t.Helper()
	return newEnvB(t, opts...)
}

func newEnvB(t testing.TB, opts ...envOpt) *env {
	t.Helper()
	r := testinfra.Redis(t)
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	cfg := app.Config{Locale: domain.JA, Location: tokyo, Persona: "# Mio persona", ReplyBudget: 5 * time.Second,
		RouterTimeout: 10 * time.Second, ApprovalTimeout: 10 * time.Second, ExecuteTimeout: 20 * time.Second, ChatTimeout: 10 * time.Second}
	setup := envSetup{logLevel: "debug"}
	for _, o := range opts {
		o(&cfg, &setup)
	}
	rdb := r.Client
	if setup.redisDown {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // nothing listens there any more: every Redis call fails
		rdb = redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1, DialerRetries: 1})
		t.Cleanup(func() { rdb.Close() })
	}
	suite := peertest.Start(t, approver)
	logs := &testinfra.SyncBuffer{}
	tel, err := telemetry.New(context.Background(), telemetry.Config{ServiceName: "chat-mio", LogLevel: setup.logLevel, LogWriter: logs})
	if err != nil {
		t.Fatal(err)
	}
	cl := suite.Clients(t, tel)
	if setup.approvalDown {
		// Nothing listens there any more: every approval call is refused at connect.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := "http://" + ln.Addr().String()
		ln.Close()
		cl.Approval = approvalv1connect.NewApprovalServiceClient(rpcserver.NewHTTPClient(), dead)
	}
	st := store.NewRedis(rdb, r.Prefix, time.Hour)
	model := &fakeModel{reply: "はい、Mio です。"}
	a, err := app.New(cfg, st, redisalloc.New(rdb, tokyo, r.Prefix, redisalloc.WithLogger(tel.Logger)),
		app.Peers{Router: peers.Router{Client: cl.Router}, Approvals: peers.Approvals{Client: cl.Approval},
			Executor: peers.Executor{Client: cl.Executor}, Heartbeat: peers.Heartbeat{Client: cl.Heartbeat}},
		model, peers.Gateways{ByChannel: map[string]gatewayv1connect.NotificationServiceClient{"line": cl.Gateway}}, tel.Logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return &env{app: a, peers: suite, model: model, logs: logs, rdb: r.Client, prefix: r.Prefix, store: st, now: cfg.Now}
}

func (e *env) send(t *testing.T, user, text string) *chatv1.HandleMessageResponse {
	t.Helper()
	return e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: user, Text: text})
}

func (e *env) sendReq(t *testing.T, req *chatv1.HandleMessageRequest) *chatv1.HandleMessageResponse {
	t.Helper()
	res, err := e.app.HandleMessage(context.Background(), req)
	if err != nil {
		t.Fatalf("HandleMessage(%q): %v", req.GetText(), err)
	}
	if len(res.GetMessages()) == 0 {
		t.Fatalf("HandleMessage(%q): no reply", req.GetText())
	}
	return res
}

func text(res *chatv1.HandleMessageResponse) string {
	var parts []string
	for _, m := range res.GetMessages() {
		parts = append(parts, m.GetText())
	}
	return strings.Join(parts, "\n")
}

func actions(res *chatv1.HandleMessageResponse) []*commonv1.Action {
	var out []*commonv1.Action
	for _, m := range res.GetMessages() {
		out = append(out, m.GetActions()...)
	}
	return out
}

func mustContain(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("reply does not contain %q:\n%s", w, got)
		}
	}
}

func waitPush(t *testing.T, g *peertest.Gateway) *gatewayv1.PushRequest {
	t.Helper()
	select {
	case p := <-g.Pushed:
		return p
	case <-time.After(20 * time.Second):
		t.Fatal("no push arrived")
		return nil
	}
}

var errModelDown = errors.New("ollama: connection refused")
