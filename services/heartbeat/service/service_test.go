package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	heartbeatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/service"
)

func manualBeat(id, alias, kind string, st heartbeatv1.AgentState, jobs ...string) *heartbeatv1.BeatRequest {
	return &heartbeatv1.BeatRequest{Heartbeat: &heartbeatv1.Heartbeat{
		AgentId: id, Alias: alias, Kind: kind, Service: "coder-order", Status: st, CurrentJobIds: jobs,
		MemoryUsageMb: 33.3, LastTaskDurationMs: 120, Timestamp: timestamppb.Now(),
	}}
}

// The API over both Connect and gRPC: beats, the report, the JSON endpoint, Watch and errors.
func TestAPI(t *testing.T) {
	cfg := service.DefaultConfig()
	cfg.Auth = testinfra.Auth(service.Name)
	cfg.Common = testCommon(t, 30, 60)
	cfg.HeartbeatSender.Enabled = false // only the beats this test sends
	cfg.LogWriter = io.Discard
	hb := startHeartbeat(t, cfg, testinfra.Listen(t))
	ctx := context.Background()

	clients := map[string]heartbeatv1connect.HeartbeatServiceClient{
		"connect": hbClient(t, hb.URL),
		"grpc":    heartbeatv1connect.NewHeartbeatServiceClient(rpcserver.NewHTTPClient(), hb.URL, connect.WithGRPC(), testinfra.AsSuite(t, svcauth.Heartbeat)),
	}
	watch, err := clients["grpc"].Watch(ctx, &heartbeatv1.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()

	for name, c := range clients {
		t.Run(name, func(t *testing.T) {
			if _, err := c.Beat(ctx, manualBeat("order1", "Aka", "agent", heartbeatv1.AgentState_AGENT_STATE_BUSY, "job_20260101_005")); err != nil {
				t.Fatal(err)
			}
			_, err := c.Beat(ctx, manualBeat("order1", "Aka", "agent", heartbeatv1.AgentState_AGENT_STATE_TIMEOUT))
			if connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Fatalf("beat with status timeout = %v, want InvalidArgument", err)
			}
			if _, err := c.Beat(ctx, &heartbeatv1.BeatRequest{}); connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Fatalf("empty beat = %v, want InvalidArgument", err)
			}
			rep, err := c.Report(ctx, &heartbeatv1.ReportRequest{Locale: "en"})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.GetAgents()) != 1 {
				t.Fatalf("agents = %v", rep.GetAgents())
			}
			a := rep.GetAgents()[0]
			if a.GetState() != heartbeatv1.AgentState_AGENT_STATE_BUSY || a.GetLast().GetCurrentJobId() != "job_20260101_005" ||
				a.GetLast().GetAlias() != "Aka" || a.GetLastSeen() == nil || a.GetStateSince() == nil {
				t.Fatalf("agent = %v", a)
			}
			if !strings.Contains(rep.GetText(), "- Aka (order1): busy | last seen 0s ago | job job_20260101_005 | memory 33.3MB") {
				t.Fatalf("text:\n%s", rep.GetText())
			}
		})
	}

	// The first beat made order1 known (a change); the second client's beat was the same state.
	if !watch.Receive() {
		t.Fatalf("watch ended: %v", watch.Err())
	}
	if msg := watch.Msg(); msg.GetAgent().GetLast().GetAgentId() != "order1" || msg.GetPreviousState() != heartbeatv1.AgentState_AGENT_STATE_UNSPECIFIED {
		t.Fatalf("watched %v", msg)
	}
	if _, err := clients["connect"].Beat(ctx, manualBeat("order1", "Aka", "agent", heartbeatv1.AgentState_AGENT_STATE_IDLE)); err != nil {
		t.Fatal(err)
	}
	if !watch.Receive() {
		t.Fatalf("watch ended: %v", watch.Err())
	}
	if msg := watch.Msg(); msg.GetAgent().GetState() != heartbeatv1.AgentState_AGENT_STATE_IDLE || msg.GetPreviousState() != heartbeatv1.AgentState_AGENT_STATE_BUSY {
		t.Fatalf("watched %v", msg)
	}

	// A watcher that asks for the current picture gets it first.
	cur, err := clients["connect"].Watch(ctx, &heartbeatv1.WatchRequest{IncludeCurrent: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	if !cur.Receive() || cur.Msg().GetAgent().GetLast().GetAgentId() != "order1" {
		t.Fatalf("current picture: %v %v", cur.Msg(), cur.Err())
	}

	// JSON endpoint, Japanese by default.
	res, err := http.Get(hb.URL + "/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Agents []struct {
			AgentID string `json:"agent_id"`
			Alias   string `json:"alias"`
			Status  string `json:"status"`
			Kind    string `json:"kind"`
		} `json:"agents"`
		Text string `json:"text"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || len(body.Agents) != 1 || body.Agents[0].Status != "idle" || body.Agents[0].Alias != "Aka" ||
		body.Agents[0].Kind != "agent" || !strings.Contains(body.Text, "・Aka (order1): 待機中") {
		t.Fatalf("status %d body %+v", res.StatusCode, body)
	}
}

// Restarting the heartbeat service keeps the last known state of every agent.
// The picture outlives a restart on either state engine; on the embedded SQLite engine no Redis
// is used (nothing listens at redis.addr) nor asked for by readiness.
func TestRestartKeepsState(t *testing.T) {
	for _, engine := range []string{config.StateRedis, config.StateSQLite} {
		t.Run(engine, func(t *testing.T) {
			cfg := service.DefaultConfig()
			cfg.Auth = testinfra.Auth(service.Name)
			cfg.Common = testCommon(t, 1, 2)
			if engine == config.StateSQLite {
				cfg.State = config.State{Engine: config.StateSQLite, Path: filepath.Join(t.TempDir(), "state.db"), Sync: "normal"}
				cfg.Redis.Addr = "127.0.0.1:1"
			}
			cfg.HeartbeatSender.Enabled = false
			cfg.LogWriter = io.Discard
			restartKeepsState(t, cfg)
		})
	}
}

func restartKeepsState(t *testing.T, cfg service.Config) {
	ctx := context.Background()

	first := startHeartbeat(t, cfg, testinfra.Listen(t))
	c := hbClient(t, first.URL)
	beats := []*heartbeatv1.BeatRequest{
		manualBeat("order1", "Aka", "agent", heartbeatv1.AgentState_AGENT_STATE_BUSY, "job_20260101_010"),
		manualBeat("order2", "Ao", "agent", heartbeatv1.AgentState_AGENT_STATE_ERROR),
		manualBeat("executor", "executor", "service", heartbeatv1.AgentState_AGENT_STATE_IDLE),
	}
	beats[1].Heartbeat.ErrorMessage = "openai gpt-4o HTTP 401"
	beats[1].Heartbeat.ErrorCode = "llm.unauthenticated"
	for _, b := range beats {
		if _, err := c.Beat(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	// Let executor time out so a decided state (not just a beat) is part of the picture.
	if _, err := c.Beat(ctx, beats[0]); err != nil {
		t.Fatal(err)
	}
	testinfra.Eventually(t, 10*time.Second, "executor timeout", func() bool {
		rep, err := c.Report(ctx, &heartbeatv1.ReportRequest{})
		if err != nil {
			return false
		}
		for _, a := range rep.GetAgents() {
			if a.GetLast().GetAgentId() == "executor" {
				return a.GetState() == heartbeatv1.AgentState_AGENT_STATE_TIMEOUT
			}
		}
		return false
	})
	before, err := c.Report(ctx, &heartbeatv1.ReportRequest{})
	if err != nil {
		t.Fatal(err)
	}
	first.stop()

	second := startHeartbeat(t, cfg, testinfra.Listen(t))
	after, err := hbClient(t, second.URL).Report(ctx, &heartbeatv1.ReportRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.GetAgents()) != 3 {
		t.Fatalf("after restart: %v", after.GetAgents())
	}
	for i, a := range after.GetAgents() {
		b := before.GetAgents()[i]
		if a.GetLast().GetAgentId() != b.GetLast().GetAgentId() || a.GetState() != b.GetState() ||
			!a.GetLastSeen().AsTime().Equal(b.GetLastSeen().AsTime()) ||
			a.GetLast().GetCurrentJobId() != b.GetLast().GetCurrentJobId() ||
			a.GetLast().GetErrorMessage() != b.GetLast().GetErrorMessage() || a.GetLast().GetErrorCode() != b.GetLast().GetErrorCode() {
			t.Errorf("agent %d: before %v\nafter %v", i, b, a)
		}
	}

}

// A service that is processing a job reports busy with that job's id, through the sender
// rpcserver runs for every service.
func TestServiceProcessingJobIsBusy(t *testing.T) {
	cfg := service.DefaultConfig()
	cfg.Auth = testinfra.Auth(service.Name)
	cfg.Common = testCommon(t, 1, 3)
	cfg.LogWriter = io.Discard
	hb := startHeartbeat(t, cfg, testinfra.Listen(t))

	tel, err := telemetry.New(context.Background(), telemetry.Config{ServiceName: "gateway-line", LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ln := testinfra.Listen(t)
	srv, err := rpcserver.New(rpcserver.Config{Name: "gateway-line", Listener: ln, Credentials: testinfra.Credentials(t, svcauth.GatewayLine),
		Heartbeat: &rpcserver.Heartbeat{Enabled: true, URL: hb.URL, Interval: time.Second}}, tel)
	if err != nil {
		t.Fatal(err)
	}
	push := &blockingPush{entered: make(chan struct{}), release: make(chan struct{})}
	srv.Mount(gatewayv1connect.NewNotificationServiceHandler(push, srv.HandlerOptions()...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-srv.Ready()

	opts, err := rpcserver.ClientOptions(tel, 30*time.Second, testinfra.AsSuite(t, svcauth.GatewayLine))
	if err != nil {
		t.Fatal(err)
	}
	gw := gatewayv1connect.NewNotificationServiceClient(rpcserver.NewHTTPClient(), "http://"+ln.Addr().String(), opts...)
	callDone := make(chan error, 1)
	go func() {
		_, err := gw.Push(jobid.WithJobID(context.Background(), "job_20260101_077"), &gatewayv1.PushRequest{SessionId: "line:U1"})
		callDone <- err
	}()
	<-push.entered

	report := hbClient(t, hb.URL)
	state := func(id string) *heartbeatv1.AgentStatus {
		rep, err := report.Report(context.Background(), &heartbeatv1.ReportRequest{})
		if err != nil {
			return nil
		}
		for _, a := range rep.GetAgents() {
			if a.GetLast().GetAgentId() == id {
				return a
			}
		}
		return nil
	}
	testinfra.Eventually(t, 10*time.Second, "gateway-line busy with job_20260101_077", func() bool {
		a := state("gateway-line")
		return a != nil && a.GetState() == heartbeatv1.AgentState_AGENT_STATE_BUSY && a.GetLast().GetCurrentJobId() == "job_20260101_077"
	})
	close(push.release)
	if err := <-callDone; err != nil {
		t.Fatal(err)
	}
	testinfra.Eventually(t, 10*time.Second, "gateway-line idle again", func() bool {
		a := state("gateway-line")
		return a != nil && a.GetState() == heartbeatv1.AgentState_AGENT_STATE_IDLE && a.GetLast().GetLastTaskDurationMs() > 0
	})
}

type blockingPush struct {
	gatewayv1connect.UnimplementedNotificationServiceHandler
	entered chan struct{}
	release chan struct{}
}

func (p *blockingPush) Push(ctx context.Context, _ *gatewayv1.PushRequest) (*gatewayv1.PushResponse, error) {
	p.entered <- struct{}{}
	select {
	case <-p.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	time.Sleep(5 * time.Millisecond) // a measurable task duration
	return &gatewayv1.PushResponse{Delivered: 1}, nil
}

// An agent reporting an error alerts once, not once per beat, and its recovery alerts once.
func TestErrorAlertsOnce(t *testing.T) {
	gw := startFakeGateway(t)
	cfg := service.DefaultConfig()
	cfg.Auth = testinfra.Auth(service.Name)
	cfg.Common = testCommon(t, 30, 60)
	cfg.HeartbeatSender.Enabled = false
	cfg.Locale = "en"
	cfg.Services.GatewaySlack.URL = gw.URL
	cfg.ReportToChat = true
	cfg.AdminSession = "slack:C0ADMIN:1700000000.000100"
	cfg.LogWriter = io.Discard
	hb := startHeartbeat(t, cfg, testinfra.Listen(t))
	c := hbClient(t, hb.URL)
	ctx := context.Background()
	bad := manualBeat("order3", "Gin", "agent", heartbeatv1.AgentState_AGENT_STATE_ERROR)
	// A model call's failure: its kind, and only a short detail of the provider's answer.
	bad.Heartbeat.ErrorCode, bad.Heartbeat.ErrorMessage = "llm.rate_limited", "anthropic claude-sonnet-4-5 HTTP 529"
	for _, b := range []*heartbeatv1.BeatRequest{
		manualBeat("order3", "Gin", "agent", heartbeatv1.AgentState_AGENT_STATE_IDLE),
		bad, bad, bad,
		manualBeat("order3", "Gin", "agent", heartbeatv1.AgentState_AGENT_STATE_IDLE),
		manualBeat("order3", "Gin", "agent", heartbeatv1.AgentState_AGENT_STATE_BUSY),
	} {
		if _, err := c.Beat(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	testinfra.Eventually(t, 10*time.Second, "two pushes", func() bool { return len(gw.Pushes()) >= 2 })
	// Give a wrongly repeated alert the chance to arrive before counting.
	time.Sleep(300 * time.Millisecond)
	pushes := gw.Pushes()
	if len(pushes) != 2 {
		t.Fatalf("pushes = %v, want 2", pushes)
	}
	if p := pushes[0]; p.GetSessionId() != cfg.AdminSession || p.GetRetryKey() == "" ||
		p.GetMessages()[0].GetText() != "⚠️ Alert: Gin (order3) reported an error: the model provider's rate limit was reached (anthropic claude-sonnet-4-5 HTTP 529)" {
		t.Errorf("alert = %v", p)
	}
	// The second healthy beat in a row closes the incident (heartbeat.recover_after: 2).
	if text := pushes[1].GetMessages()[0].GetText(); !strings.HasPrefix(text, "✅ Recovered: Gin (order3) is back (busy;") {
		t.Errorf("recovery = %q", text)
	}
}

func TestConfig(t *testing.T) {
	yamlText := []byte(`
locale: en
heartbeat:
  enabled: true
  interval_sec: 5
  timeout_sec: 20
  report_to_chat: true
  admin_session: "line:Uadmin"
  alert_after: 3
  recover_after: 4
`)
	cfg := service.DefaultConfig()
	cfg.Auth = testinfra.Auth(service.Name)
	if err := config.Decode(yamlText, &cfg); err != nil {
		t.Fatal(err)
	}
	if !cfg.ReportToChat || cfg.AdminSession != "line:Uadmin" || cfg.HeartbeatSender.IntervalSec != 5 ||
		cfg.HeartbeatSender.TimeoutSec != 20 || cfg.Locale != "en" || cfg.AlertAfter != 3 || cfg.RecoverAfter != 4 {
		t.Fatalf("decoded %+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PICOCLAW_HEARTBEAT_ADMIN_SESSION": "cli:me"}
	if err := config.ApplyEnv(&cfg, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	err := cfg.Validate()
	var ke *config.KeyError
	if !errors.As(err, &ke) || ke.Key != "heartbeat.admin_session" {
		t.Fatalf("Validate() = %v, want an error naming heartbeat.admin_session", err)
	}
	cfg.ReportToChat = false
	if err := cfg.Validate(); err != nil {
		t.Fatalf("admin session is only needed with report_to_chat: %v", err)
	}
	cfg.AlertAfter = 0
	if err := cfg.Validate(); !errors.As(err, &ke) || ke.Key != "heartbeat.alert_after" {
		t.Fatalf("Validate() = %v, want an error naming heartbeat.alert_after", err)
	}
}

func TestExampleConfig(t *testing.T) {
	data, err := os.ReadFile("../../../config/picoclaw.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := service.DefaultConfig()
	cfg.Auth = testinfra.Auth(service.Name)
	if err := config.Decode(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.ReportToChat || cfg.HeartbeatSender.IntervalSec != 30 || cfg.HeartbeatSender.TimeoutSec != 60 || !cfg.HeartbeatSender.Enabled ||
		cfg.AlertAfter != 2 || cfg.RecoverAfter != 2 || cfg.Replica != "" {
		t.Fatalf("example decoded as %+v", cfg)
	}
}

// A service beats for itself only: the executor cannot report as coder-order (or hide behind
// another service's state).
func TestBeatOnlyForItself(t *testing.T) {
	cfg := service.DefaultConfig()
	cfg.Common = testCommon(t, 30, 60)
	cfg.HeartbeatSender.Enabled = false
	cfg.LogWriter = io.Discard
	hb := startHeartbeat(t, cfg, testinfra.Listen(t))
	as := func(id string) heartbeatv1connect.HeartbeatServiceClient {
		return heartbeatv1connect.NewHeartbeatServiceClient(rpcserver.NewHTTPClient(), hb.URL,
			svcauth.Client(testinfra.Credentials(t, id), svcauth.Heartbeat))
	}
	beat := manualBeat("order1", "Aka", "agent", heartbeatv1.AgentState_AGENT_STATE_IDLE) // service coder-order
	if _, err := as(svcauth.Executor).Beat(context.Background(), beat); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("executor beating as coder-order: %v", err)
	}
	if _, err := as(svcauth.CoderOrder).Beat(context.Background(), beat); err != nil {
		t.Fatalf("coder-order beating for itself: %v", err)
	}
}
