package service_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1/chatv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/peertest"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/service"
)

type running struct {
	stop   func()
	url    string
	logs   *testinfra.SyncBuffer
	peers  *peertest.Suite
	ollama *fakellm.Server
	client chatv1connect.ChatServiceClient
	grpc   chatv1connect.ChatServiceClient
}

func start(t *testing.T, spans ...sdktrace.SpanProcessor) *running {
	t.Helper()
	r := testinfra.Redis(t)
	return startWith(t, peertest.Start(t, "Uowner"), func(cfg *service.Config) {
		cfg.Redis.Addr, cfg.Redis.KeyPrefix = r.Addr, r.Prefix
		cfg.Telemetry.SpanProcessors = spans
	})
}

// startWith runs chat-mio against peers, with mutate's changes to the test configuration.
func startWith(t *testing.T, peers *peertest.Suite, mutate func(*service.Config)) *running {
	t.Helper()
	return startOn(t, fakellm.Start(t, fakellm.Ollama, fakellm.Reply("こんにちは、Mio です。")), peers, mutate)
}

// startOn is startWith on the given Ollama fake.
func startOn(t *testing.T, ollama *fakellm.Server, peers *peertest.Suite, mutate func(*service.Config)) *running {
	t.Helper()

	cfg := service.DefaultConfig()
	cfg.LogLevel = "debug"
	cfg.Services.RouterShiro.URL = peers.RouterSrv.URL
	cfg.Services.Approval.URL = peers.Approval.URL
	cfg.Services.Executor.URL = peers.ExecutorSrv.URL
	cfg.Services.Heartbeat.URL = peers.HeartbeatSrv.URL
	cfg.Services.GatewayLine.URL = peers.GatewaySrv.URL
	cfg.Ollama.BaseURL = ollama.URL
	cfg.Chat.PersonaFile = filepath.Join("..", "..", "..", "config", "persona", "mio.md")
	ln := testinfra.Listen(t)
	cfg.Listener = ln
	cfg.Auth = testinfra.Auth(service.Name)
	logs := &testinfra.SyncBuffer{}
	cfg.LogWriter = logs
	mutate(&cfg)
	url := testinfra.URL(ln)
	stop := testinfra.Serve(t, service.Name, url+"/readyz", func(ctx context.Context) error { return service.Run(ctx, cfg) })
	hc := rpcserver.NewHTTPClient()
	t.Cleanup(hc.CloseIdleConnections)
	return &running{stop: stop, url: url, logs: logs, peers: peers, ollama: ollama,
		client: chatv1connect.NewChatServiceClient(hc, url, testinfra.AsSuite(t, svcauth.ChatMio)),
		grpc:   chatv1connect.NewChatServiceClient(hc, url, connect.WithGRPC(), testinfra.AsSuite(t, svcauth.ChatMio))}
}

func (r *running) send(t *testing.T, user, text string) *chatv1.HandleMessageResponse {
	t.Helper()
	res, err := r.client.HandleMessage(context.Background(), &chatv1.HandleMessageRequest{
		SessionId: "line:" + user, Channel: "line", UserId: user, Text: text, EventId: "ev-" + text})
	if err != nil {
		t.Fatalf("HandleMessage(%q): %v", text, err)
	}
	return res
}

func replyText(res *chatv1.HandleMessageResponse) string {
	var s []string
	for _, m := range res.GetMessages() {
		s = append(s, m.GetText())
	}
	return strings.Join(s, "\n")
}

func TestChatOverOllamaProtocol(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	r := start(t, rec)
	res, err := r.grpc.HandleMessage(context.Background(), &chatv1.HandleMessageRequest{SessionId: "line:Uowner", Channel: "line", UserId: "Uowner", Text: "おはよう"})
	if err != nil {
		t.Fatal(err)
	}
	if got := replyText(res); got != "こんにちは、Mio です。" {
		t.Fatalf("reply %q", got)
	}
	reqs := r.ollama.Requests()
	if len(reqs) != 1 {
		t.Fatalf("ollama calls %d", len(reqs))
	}
	body := reqs[0]
	if body.Model != "chat-v1:latest" || body.Stream {
		t.Fatalf("ollama request %s", body.Raw)
	}
	if body.Options["num_ctx"] != float64(8192) {
		t.Fatalf("num_ctx missing: %v", body.Options)
	}
	sys := body.Messages[0]
	persona, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "persona", "mio.md"))
	if err != nil {
		t.Fatal(err)
	}
	content := sys.Content
	if sys.Role != "system" || !strings.HasPrefix(content, strings.TrimSpace(string(persona))) {
		t.Fatalf("system prompt does not start with the persona file:\n%s", content)
	}
	if strings.Index(content, "# ポリシー") < len(persona)-5 || !strings.Contains(content, "job_id: "+res.GetJobId()) {
		t.Fatalf("system prompt order/job id wrong:\n%s", content)
	}

	// chat-mio's spans for the message carry the job id: its own, the model call's and the
	// session store's Redis commands (all but the allocation that creates the id).
	seen := map[string]bool{}
	for _, sp := range rec.Ended() {
		jid := ""
		for _, kv := range sp.Attributes() {
			if string(kv.Key) == "job_id" {
				jid = kv.Value.AsString()
			}
		}
		seen[sp.Name()] = true
		if (sp.Name() == "chat.handle_message" || sp.Name() == "chat.model_reply" || sp.Name() == "redis.pipeline hgetall smembers lrange get") && jid != res.GetJobId() {
			t.Errorf("span %s has job_id %q, want %q", sp.Name(), jid, res.GetJobId())
		}
	}
	for _, name := range []string{"chat.handle_message", "chat.model_reply", "redis.pipeline hgetall smembers lrange get", "picoclaw.router.v1.RouterService/ProcessTask"} {
		if !seen[name] {
			t.Errorf("no span %q; spans: %v", name, seen)
		}
	}
}

func TestApprovalConversationEndToEnd(t *testing.T) {
	r := start(t)
	res := r.send(t, "Uowner", "/code docs/guide.md を作って")
	id := res.GetJobId()
	acts := res.GetMessages()[0].GetActions()
	if len(acts) != 3 || acts[0].GetKind() != commonv1.ActionKind_ACTION_KIND_APPROVE || acts[0].GetJobId() != id {
		t.Fatalf("pending reply: %s %v", replyText(res), acts)
	}
	// A stranger's approval is refused and nothing runs.
	if got := replyText(r.send(t, "Ustranger", "/approve "+id)); !strings.Contains(got, "権限がありません") {
		t.Fatalf("stranger: %s", got)
	}
	if r.peers.Executor.Calls() != 0 {
		t.Fatal("executed after a refused approval")
	}
	res = r.send(t, "Uowner", "/approve "+id)
	if res.GetJobId() != id || !strings.Contains(replyText(res), "実行: 1 件, 成功: 1 件, 失敗: 0 件") {
		t.Fatalf("approve reply %s: %s", res.GetJobId(), replyText(res))
	}
	if _, err := os.Stat(filepath.Join(r.peers.Workspace, "docs", "guide.md")); err != nil {
		t.Fatal(err)
	}

	// Deny records the reason.
	id2 := r.send(t, "Uowner", "/code docs/other.md").GetJobId()
	if got := replyText(r.send(t, "Uowner", "/deny "+id2+" 不要になった")); !strings.Contains(got, "理由: 不要になった") {
		t.Fatalf("deny: %s", got)
	}
	if j := r.peers.Job(t, id2); j.GetDenyReason() != "不要になった" {
		t.Fatalf("stored reason %q", j.GetDenyReason())
	}

	// Auto-Approve for docs/: docs proposals run, deletions still ask.
	r.send(t, "Uowner", "/auto-approve on paths=docs/ ttl=1m")
	res = r.send(t, "Uowner", "/code docs/guide.md を更新")
	if got := replyText(res); !strings.Contains(got, "確認なしで実行しました") || len(res.GetMessages()[0].GetActions()) != 0 {
		t.Fatalf("auto-approved: %s", got)
	}
	r.peers.Router.SetPropose(func(string) (string, commonv1.TaskType) {
		return peertest.Patch(peertest.PatchCommand{Type: "file_edit", Action: "delete", Target: "docs/guide.md"}), commonv1.TaskType_TASK_TYPE_DOCS
	})
	res = r.send(t, "Uowner", "/code docs/guide.md を消して")
	if len(res.GetMessages()[0].GetActions()) != 3 {
		t.Fatalf("delete did not ask: %s", replyText(res))
	}

	// Every chat-mio log line of the first job's messages carries its id; so do the peers' and the audit events.
	for _, l := range r.logs.Records() {
		if l["msg"] == "approval.requested" || l["msg"] == "approval.granted" || l["msg"] == "execution.finished" {
			if jid, _ := l["job_id"].(string); !strings.HasPrefix(jid, "job_") {
				t.Errorf("log line without job id: %v", l)
			}
		}
	}
	found := false
	for _, l := range r.peers.ExecutorSrv.Logs.Records() {
		if l["msg"] == "rpc.handled" && l["job_id"] == id {
			found = true
		}
	}
	if !found {
		t.Error("executor log has no line with the job id")
	}
	if got := strings.Join(r.peers.Events(t, id), ","); got != "requested,decision_rejected,granted,claimed,execution_completed" {
		t.Fatalf("audit events of %s: %s", id, got)
	}
}

// On the embedded SQLite engine chat-mio needs no Redis (nothing listens at redis.addr, and
// readiness does not ask for it), and sessions and the JobID counter outlive a restart.
func TestStateOnSQLiteNeedsNoRedis(t *testing.T) {
	peers := peertest.Start(t, "Uowner")
	path := filepath.Join(t.TempDir(), "state.db")
	sqlite := func(cfg *service.Config) {
		cfg.State = config.State{Engine: config.StateSQLite, Path: path, Sync: "normal"}
		cfg.Redis.Addr = "127.0.0.1:1"
	}
	r := startWith(t, peers, sqlite)
	first := r.send(t, "Uowner", "おはよう")
	if got := replyText(first); got != "こんにちは、Mio です。" {
		t.Fatalf("reply %q", got)
	}
	if !strings.HasSuffix(first.GetJobId(), "_001") {
		t.Fatalf("first job id on a new state file = %s", first.GetJobId())
	}
	pending := r.send(t, "Uowner", "/code docs/guide.md を作って").GetJobId()
	local := r.send(t, "Uowner", "/local")
	if got := replyText(local); !strings.Contains(got, "ローカル限定モードにしました") {
		t.Fatalf("/local: %s", got)
	}
	r.stop()

	r = startWith(t, peers, sqlite)
	res := r.send(t, "Uowner", "/status")
	if got := replyText(res); !strings.Contains(got, "ローカル限定 オン") || !strings.Contains(got, "承認待ち "+pending) {
		t.Fatalf("status after a restart: %s", got)
	}
	for _, before := range []string{first.GetJobId(), pending, local.GetJobId()} {
		if before == "" || res.GetJobId() == "" || res.GetJobId() == before {
			t.Fatalf("job id %s handed out again after a restart", before)
		}
	}
}

func TestInvalidRequestIsInvalidArgument(t *testing.T) {
	r := start(t)
	_, err := r.client.HandleMessage(context.Background(), &chatv1.HandleMessageRequest{SessionId: "nope", Channel: "line", UserId: "Uowner", Text: "hi"})
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("code %v (%v)", connect.CodeOf(err), err)
	}
}

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*service.Config)
		key    string
	}{
		{"defaults", func(*service.Config) {}, ""},
		{"persona", func(c *service.Config) { c.Chat.PersonaFile = " " }, "chat.persona_file"},
		{"memory", func(c *service.Config) { c.Chat.MemoryTurns = 1000 }, "chat.memory_turns"},
		{"budget", func(c *service.Config) { c.Chat.ReplyBudget = 0 }, "chat.reply_budget"},
		{"cloud chat model", func(c *service.Config) { c.Agents.Chat.Provider = "openai" }, "agents.chat.provider"},
		{"no model", func(c *service.Config) { c.Agents.Chat.Model = "" }, "agents.chat.model"},
		{"zone", func(c *service.Config) { c.TimeZone = "Mars/Base" }, "timezone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := service.DefaultConfig()
			tt.mutate(&c)
			err := c.Validate()
			if tt.key == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ke *config.KeyError
			if err == nil || !errors.As(err, &ke) || !strings.Contains(err.Error(), tt.key+":") {
				t.Fatalf("want error naming %s, got %v", tt.key, err)
			}
		})
	}
}

func TestExampleConfigLoads(t *testing.T) {
	c := service.DefaultConfig()
	if err := config.Load(filepath.Join("..", "..", "..", "config", "picoclaw.example.yaml"), &c); err != nil {
		t.Fatal(err)
	}
	want := service.DefaultChat()
	if c.Chat != want {
		t.Fatalf("example chat section differs from the defaults:\n%+v\n%+v", c.Chat, want)
	}
	if c.Agents.Chat.Provider != "ollama" || c.Agents.Chat.Model != "chat-v1:latest" {
		t.Fatalf("agents.chat = %+v", c.Agents.Chat)
	}
}
