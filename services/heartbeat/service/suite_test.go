package service_test

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"

	heartbeatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	approval "github.com/picoclaw-suite/picoclaw/services/approval/service"
	chatmio "github.com/picoclaw-suite/picoclaw/services/chat-mio/service"
	coderorder "github.com/picoclaw-suite/picoclaw/services/coder-order/service"
	executor "github.com/picoclaw-suite/picoclaw/services/executor/service"
	gatewayline "github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
	gatewayslack "github.com/picoclaw-suite/picoclaw/services/gateway-slack/service"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/service"
	routershiro "github.com/picoclaw-suite/picoclaw/services/router-shiro/service"
)

// peer is one of the other seven services, run in-process through its public Run.
type peer struct {
	name string
	// run starts the service with c (its identity set) and w (its listener and a discarded log).
	run func(ctx context.Context, c config.Common, w rpcserver.Wiring) error
}

// peers are the seven other services with what each needs to start; dir holds their files.
func peers(dir string) []peer {
	return []peer{
		{gatewayline.Name, func(ctx context.Context, c config.Common, w rpcserver.Wiring) (err error) {
			cfg := gatewayline.DefaultConfig()
			cfg.Common, cfg.Wiring = c, w
			if cfg.PublicListener, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
				return err
			}
			cfg.Line.ChannelSecret, cfg.Line.ChannelAccessToken = "suite-line-secret-0123456789abcdefghij", "suite-line-token-0123456789abcdefghijkl"
			return gatewayline.Run(ctx, cfg)
		}},
		{gatewayslack.Name, func(ctx context.Context, c config.Common, w rpcserver.Wiring) (err error) {
			cfg := gatewayslack.DefaultConfig()
			cfg.Common, cfg.Wiring = c, w
			if cfg.PublicListener, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
				return err
			}
			cfg.Slack.SigningSecret, cfg.Slack.BotToken, cfg.Slack.BotUserID = "suite-slack-secret-0123456789abcdefghij", "xoxb-suite-0123456789abcdefghijklmnopq", "UBOT"
			return gatewayslack.Run(ctx, cfg)
		}},
		{chatmio.Name, func(ctx context.Context, c config.Common, w rpcserver.Wiring) (err error) {
			cfg := chatmio.DefaultConfig()
			cfg.Common, cfg.Wiring = c, w
			cfg.Agents.Chat.Provider = llm.ProviderOffline
			cfg.Chat.PersonaFile = "../../../config/persona/mio.md"
			return chatmio.Run(ctx, cfg)
		}},
		{routershiro.Name, func(ctx context.Context, c config.Common, w rpcserver.Wiring) (err error) {
			cfg := routershiro.DefaultConfig()
			cfg.Common, cfg.Wiring = c, w
			cfg.Agents.Worker.Provider = llm.ProviderOffline
			cfg.Routing.RulesFile = "../../../config/rules.yaml"
			return routershiro.Run(ctx, cfg)
		}},
		{coderorder.Name, func(ctx context.Context, c config.Common, w rpcserver.Wiring) (err error) {
			cfg := coderorder.DefaultConfig()
			cfg.Common, cfg.Wiring = c, w
			return coderorder.Run(ctx, cfg)
		}},
		{approval.Name, func(ctx context.Context, c config.Common, w rpcserver.Wiring) (err error) {
			cfg := approval.DefaultConfig()
			cfg.Common, cfg.Wiring = c, w
			if cfg.PublicListener, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
				return err
			}
			cfg.Approval.Store, cfg.Approval.SQLitePath = approval.StoreSQLite, filepath.Join(dir, "audit.db")
			cfg.Approval.Audit.Key = config.Secret("heartbeat-test-audit-key-0123456789abcdef")
			return approval.Run(ctx, cfg)
		}},
		{executor.Name, func(ctx context.Context, c config.Common, w rpcserver.Wiring) (err error) {
			cfg := executor.DefaultConfig()
			cfg.Common, cfg.Wiring = c, w
			cfg.Executor.Workspace = filepath.Join(dir, "workspace")
			return executor.Run(ctx, cfg)
		}},
	}
}

// started is a peer service running until stop.
type started struct {
	stop func()
}

func startPeer(t *testing.T, p peer, c config.Common) *started {
	t.Helper()
	ln := testinfra.Listen(t)
	c.Auth = testinfra.Auth(p.name)
	w := rpcserver.Wiring{Listener: ln, LogWriter: io.Discard}
	stop := testinfra.Serve(t, p.name, testinfra.URL(ln)+"/readyz", func(ctx context.Context) error { return p.run(ctx, c, w) })
	return &started{stop: stop}
}

func report(t *testing.T, url string) map[string]*heartbeatv1.AgentStatus {
	t.Helper()
	rep, err := hbClient(t, url).Report(context.Background(), &heartbeatv1.ReportRequest{})
	if err != nil {
		return nil
	}
	out := map[string]*heartbeatv1.AgentStatus{}
	for _, a := range rep.GetAgents() {
		out[a.GetLast().GetAgentId()] = a
	}
	return out
}

// Every service running in-process at a 1 s interval: the report lists every service and the
// five agents as idle; a stopped service times out within timeout + 1 interval with exactly one
// alert, its restart gives exactly one recovery; a restarted heartbeat service keeps the picture.
func TestSuiteAtOneSecondInterval(t *testing.T) {
	const interval, timeout = time.Second, 3 * time.Second
	gw := startFakeGateway(t)
	common := testCommon(t, int(interval/time.Second), int(timeout/time.Second))
	hbLn := testinfra.Listen(t)
	hbAddr := hbLn.Addr().String()
	hbURL := "http://" + hbAddr
	common.Services.Heartbeat.URL = hbURL

	hbCfg := service.DefaultConfig()
	hbCfg.Common = common
	hbCfg.Auth = testinfra.Auth(service.Name)
	hbCfg.Services.GatewayLine.URL = gw.URL
	hbCfg.ReportToChat = true
	hbCfg.AdminSession = "line:Uadmin0000"
	logs := &testinfra.SyncBuffer{}
	hbCfg.LogWriter = logs
	hb := startHeartbeat(t, hbCfg, hbLn)

	running := map[string]*started{}
	byName := map[string]peer{}
	for _, p := range peers(t.TempDir()) {
		byName[p.name] = p
		running[p.name] = startPeer(t, p, common)
	}

	wantAlias := map[string]string{
		"chat": "Mio", "worker": "Shiro", "order1": "Aka", "order2": "Ao", "order3": "Gin",
		"gateway-line": "gateway-line", "gateway-slack": "gateway-slack", "chat-mio": "chat-mio",
		"router-shiro": "router-shiro", "coder-order": "coder-order", "approval": "approval",
		"executor": "executor", "heartbeat": "heartbeat",
	}
	allIdle := func() bool {
		r := report(t, hbURL)
		if len(r) != len(wantAlias) {
			return false
		}
		for id, alias := range wantAlias {
			a := r[id]
			if a == nil || a.GetLast().GetAlias() != alias || a.GetState() != heartbeatv1.AgentState_AGENT_STATE_IDLE {
				return false
			}
		}
		return true
	}
	testinfra.Eventually(t, 15*time.Second, "every service and all five agents idle", allIdle)
	rep, err := hbClient(t, hbURL).Report(context.Background(), &heartbeatv1.ReportRequest{Locale: "en"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", rep.GetText())
	for _, line := range []string{"- Mio (chat): idle", "- Shiro (worker): idle", "- Aka (order1): idle", "- Ao (order2): idle",
		"- Gin (order3): idle", "- gateway-line: idle", "- executor: idle", "- heartbeat: idle"} {
		if !strings.Contains(rep.GetText(), line) {
			t.Errorf("report text lacks %q", line)
		}
	}

	if n := len(gw.Pushes()); n != 0 {
		t.Fatalf("%d alerts before anything went wrong: %v", n, gw.Pushes())
	}

	// Stop executor: timeout within timeout + 1 interval, exactly one alert.
	running["executor"].stop()
	stoppedAt := time.Now()
	var timedOut *heartbeatv1.AgentStatus
	testinfra.Eventually(t, timeout+interval+5*time.Second, "executor timeout", func() bool {
		a := report(t, hbURL)["executor"]
		if a != nil && a.GetState() == heartbeatv1.AgentState_AGENT_STATE_TIMEOUT {
			timedOut = a
			return true
		}
		return false
	})
	silent := timedOut.GetStateSince().AsTime().Sub(timedOut.GetLastSeen().AsTime())
	sinceStop := timedOut.GetStateSince().AsTime().Sub(stoppedAt)
	t.Logf("executor: timeout %s after its last beat, %s after it stopped", silent, sinceStop)
	if silent < timeout || sinceStop > timeout+interval {
		t.Errorf("timeout marked %s after the last beat and %s after the stop; want ≥ %s and ≤ %s", silent, sinceStop, timeout, timeout+interval)
	}
	testinfra.Eventually(t, 10*time.Second, "the alert push", func() bool { return len(gw.Pushes()) >= 1 })
	time.Sleep(2 * interval) // more sweeps and beats must not repeat the alert
	pushes := gw.Pushes()
	if len(pushes) != 1 {
		t.Fatalf("pushes after the stop = %d, want exactly 1: %v", len(pushes), pushes)
	}
	if p := pushes[0]; p.GetSessionId() != "line:Uadmin0000" || !strings.Contains(p.GetMessages()[0].GetText(), "executor から応答がありません") {
		t.Errorf("alert = %v", p)
	}

	// Restart executor: exactly one recovery push.
	running["executor"] = startPeer(t, byName["executor"], common)
	testinfra.Eventually(t, 10*time.Second, "executor idle again", func() bool {
		a := report(t, hbURL)["executor"]
		return a != nil && a.GetState() == heartbeatv1.AgentState_AGENT_STATE_IDLE
	})
	testinfra.Eventually(t, 10*time.Second, "the recovery push", func() bool { return len(gw.Pushes()) >= 2 })
	time.Sleep(2 * interval)
	pushes = gw.Pushes()
	if len(pushes) != 2 {
		t.Fatalf("pushes after the restart = %d, want exactly 2: %v", len(pushes), pushes)
	}
	if text := pushes[1].GetMessages()[0].GetText(); !strings.HasPrefix(text, "✅ 復旧: executor が正常に戻りました") {
		t.Errorf("recovery = %q", text)
	}
	if pushes[0].GetRetryKey() == pushes[1].GetRetryKey() {
		t.Error("alert and recovery share a retry key")
	}

	// Restart the heartbeat service on the same address: the picture survives.
	before := report(t, hbURL)
	hb.stop()
	ln, err := net.Listen("tcp", hbAddr)
	if err != nil {
		t.Fatal(err)
	}
	hb = startHeartbeat(t, hbCfg, ln)
	after := report(t, hbURL)
	if len(after) != len(wantAlias) {
		t.Fatalf("after the restart the report has %d agents, want %d", len(after), len(wantAlias))
	}
	for id, b := range before {
		a := after[id]
		if a == nil || a.GetState() != b.GetState() || a.GetLast().GetAlias() != b.GetLast().GetAlias() ||
			a.GetLastSeen().AsTime().Before(b.GetLastSeen().AsTime()) {
			t.Errorf("%s: before %v, after %v", id, b, a)
		}
	}
	testinfra.Eventually(t, 10*time.Second, "all idle after the heartbeat restart", allIdle)
	time.Sleep(timeout + interval) // the restart must not make anybody time out or alert
	for id, a := range report(t, hbURL) {
		if st := a.GetState(); st != heartbeatv1.AgentState_AGENT_STATE_IDLE && st != heartbeatv1.AgentState_AGENT_STATE_BUSY {
			t.Errorf("%s is %s %s after the heartbeat restart", id, st, timeout+interval)
		}
	}
	if n := len(gw.Pushes()); n != 2 {
		t.Errorf("pushes after the heartbeat restart = %d, want still 2", n)
	}
	for event, min := range map[string]int{"heartbeat.received": 13, "heartbeat.timeout": 1, "heartbeat.aggregated": 1, "heartbeat.recovered": 1} {
		if n := logs.Count(event); n < min {
			t.Errorf("log has %d %s events, want at least %d", n, event, min)
		}
	}
	if n := logs.Count("heartbeat.timeout"); n != 1 {
		t.Errorf("log has %d heartbeat.timeout events, want exactly 1", n)
	}
}
