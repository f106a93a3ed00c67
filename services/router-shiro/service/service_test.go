package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"

	"connectrpc.com/connect"

	coderv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1/coderv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	routerv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/workspace/workspacetest"
)

var rulesPath = filepath.Join("..", "..", "..", "config", "rules.yaml")

// ---------------------------------------------------------------- a local Ollama

func isClassifier(r fakellm.Request) bool {
	return strings.Contains(r.System, "Classify the user's message")
}

// newOllama is the shared Ollama fake answering with answer(req).
func newOllama(t *testing.T, answer func(fakellm.Request) (string, time.Duration)) *fakellm.Server {
	t.Helper()
	return fakellm.Start(t, fakellm.Ollama, func(r fakellm.Request) fakellm.Answer {
		content, delay := answer(r)
		a := fakellm.Answer{Content: content, Delay: delay, PromptTokens: 12, CompletionTokens: 34}
		if call, ok := strings.CutPrefix(content, callTool); ok {
			a = fakellm.Answer{ToolCalls: []fakellm.ToolCall{{Name: strings.Fields(call)[0], Arguments: strings.TrimSpace(strings.TrimPrefix(call, strings.Fields(call)[0]))}}}
		}
		return a
	})
}

// callTool starts an answer that is a tool call: "<callTool><name> <JSON arguments>".
const callTool = "CALL "

func classifierCalls(o *fakellm.Server) int {
	n := 0
	for _, r := range o.Requests() {
		if isClassifier(r) {
			n++
		}
	}
	return n
}

// ---------------------------------------------------------------- a local coder-order

type coderFake struct {
	coderv1connect.UnimplementedCoderServiceHandler
	mu      sync.Mutex
	propose []*coderv1.ProposeRequest
	many    []*coderv1.ProposeManyRequest
	// headers of each call, to check the JobID and trace context travel.
	headers []http.Header
}

func (c *coderFake) record(ctx context.Context) {
	if info, ok := connect.CallInfoForHandlerContext(ctx); ok {
		c.headers = append(c.headers, info.RequestHeader().Clone())
	}
}

func (c *coderFake) Propose(ctx context.Context, req *coderv1.ProposeRequest) (*coderv1.ProposeResponse, error) {
	c.mu.Lock()
	c.record(ctx)
	c.propose = append(c.propose, req)
	c.mu.Unlock()
	if req.GetOrder() == "order3" {
		return nil, connect.NewError(connect.CodeUnauthenticated, errors.New("anthropic: 401 invalid x-api-key"))
	}
	return &coderv1.ProposeResponse{Proposal: &commonv1.Proposal{
		JobId: req.GetJobId(), Order: req.GetOrder(), Provider: "openai", Model: "gpt-4o",
		Plan: "ソート関数を追加する", Patch: "```go:sortutil/sort.go\npackage sortutil\n```",
		Risk:     &commonv1.Risk{Level: commonv1.RiskLevel_RISK_LEVEL_LOW, RollbackPossible: true},
		CostHint: &commonv1.CostHint{EstimatedTokens: 1200, EstimatedCostUsd: 0.012},
		TaskType: commonv1.TaskType_TASK_TYPE_CODEGEN, NeedApproval: true,
	}}, nil
}

func (c *coderFake) ProposeMany(ctx context.Context, req *coderv1.ProposeManyRequest) (*coderv1.ProposeManyResponse, error) {
	c.mu.Lock()
	c.record(ctx)
	c.many = append(c.many, req)
	c.mu.Unlock()
	return &coderv1.ProposeManyResponse{Results: []*commonv1.ProposalResult{
		{Order: "order1", Proposal: &commonv1.Proposal{Order: "order1", Plan: "案A: 設定を分割", Patch: "```yaml:config/a.yaml\na: 1\n```\n```go:main.go\npackage main\n```",
			Risk: &commonv1.Risk{Level: commonv1.RiskLevel_RISK_LEVEL_MEDIUM}, CostHint: &commonv1.CostHint{EstimatedCostUsd: 0.002}}},
		{Order: "order2", Proposal: &commonv1.Proposal{Order: "order2", Plan: "案B: main を直す",
			Patch: "--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-package x\n+package main\n",
			Risk:  &commonv1.Risk{Level: commonv1.RiskLevel_RISK_LEVEL_LOW, RollbackPossible: true}, CostHint: &commonv1.CostHint{EstimatedCostUsd: 0.03}}},
		{Order: "order3", ErrorCode: "timeout", ErrorMessage: "order3 did not answer within 120s"},
	}}, nil
}

func (c *coderFake) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.propose) + len(c.many)
}

// newCoderServer serves the generated CoderService handler over HTTP/1.1 and h2c, like the
// real coder-order.
func newCoderServer(t *testing.T, fake *coderFake) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(coderv1connect.NewCoderServiceHandler(fake))
	return testinfra.H2CServer(t, mux)
}

// ---------------------------------------------------------------- the service

type stack struct {
	base   string
	router routerv1connect.RouterServiceClient
	grpc   routerv1connect.RouterServiceClient
	ollama *fakellm.Server
	coder  *coderFake
	view   *workspacetest.Server
	logs   *testinfra.SyncBuffer
}

func startStack(t *testing.T, answer func(fakellm.Request) (string, time.Duration), tweak func(*Config)) *stack {
	t.Helper()
	return startStackOn(t, newOllama(t, answer), tweak)
}

// startStackOn is startStack with the given Ollama fake.
func startStackOn(t *testing.T, ollama *fakellm.Server, tweak func(*Config)) *stack {
	t.Helper()
	st := &stack{ollama: ollama, coder: &coderFake{}, logs: &testinfra.SyncBuffer{},
		view: workspacetest.Start(t, map[string]string{"calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n"}, nil)}
	coderSrv := newCoderServer(t, st.coder)
	ln := testinfra.Listen(t)
	cfg := DefaultConfig()
	cfg.Auth = testinfra.Auth(Name)
	cfg.Listener = ln
	cfg.LogWriter = st.logs
	cfg.Routing.RulesFile = rulesPath
	cfg.Services.CoderOrder.URL = coderSrv.URL
	cfg.Services.Executor.URL = st.view.URL
	cfg.Agents.Worker.BaseURL = st.ollama.URL
	if tweak != nil {
		tweak(&cfg)
	}
	base := testinfra.URL(ln)
	testinfra.Serve(t, Name, base+"/healthz", func(ctx context.Context) error { return Run(ctx, cfg) })
	httpClient := rpcserver.NewHTTPClient()
	// Closing our idle h2c connections first lets the server shut down without waiting
	// for HTTP/2's GOAWAY grace period.
	t.Cleanup(httpClient.CloseIdleConnections)
	st.base = base
	st.router = routerv1connect.NewRouterServiceClient(httpClient, base, testinfra.AsSuite(t, svcauth.RouterShiro))
	st.grpc = routerv1connect.NewRouterServiceClient(httpClient, base, connect.WithGRPC(), testinfra.AsSuite(t, svcauth.RouterShiro))
	return st
}

func workerJSON(needsNext bool, risk string, questions ...string) string {
	b, _ := json.Marshal(map[string]any{
		"result": "集計しました: エラーは 3 件", "needs_next_loop": needsNext, "why": "完了", "next_actions": []string{},
		"questions_for_user": append([]string{}, questions...), "confidence": 0.9, "risk": risk, "fit": 0.9, "suggested_route": "",
	})
	return string(b)
}

func classifierAnswer(route string, conf float64, evidence ...string) string {
	b, _ := json.Marshal(map[string]any{"route": route, "confidence": conf, "reason": "test", "evidence": append([]string{}, evidence...)})
	return string(b)
}

// ---------------------------------------------------------------- tests

func TestRun_StartupErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(bad, []byte("version: 1\nrules:\n  - {name: ops.broken, route: OPS, pattern: '(nginx'}\n  - {name: odd.route, route: DANCE, pattern: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		tweak func(*Config)
		want  []string
	}{
		{"bad regex and unknown route name the rules", func(c *Config) { c.Routing.RulesFile = bad }, []string{`"ops.broken"`, "invalid pattern", `"odd.route"`, `unknown route "DANCE"`}},
		{"missing rules file", func(c *Config) { c.Routing.RulesFile = filepath.Join(dir, "none.yaml") }, []string{"routing.rules_file"}},
		{"cloud worker model", func(c *Config) { c.Agents.Worker.Provider = "anthropic"; c.Agents.Worker.Model = "claude" }, []string{"agents.worker.provider", "cloud models serve CODE routes only"}},
		{"unknown forced route", func(c *Config) { c.Channels.Line.ForcedRoute = "SING" }, []string{"channels.line.forced_route"}},
		{"unknown default order", func(c *Config) { c.Routing.DefaultCodeOrder = "order9" }, []string{"routing.default_code_order"}},
		{"code threshold below min", func(c *Config) { c.Routing.Classifier.MinConfidenceForCode = 0.5 }, []string{"routing.classifier.min_confidence_for_code"}},
		{"zero loops", func(c *Config) { c.Loop.MaxLoops = 0 }, []string{"loop.max_loops"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Auth = testinfra.Auth(Name)
			cfg.Routing.RulesFile = rulesPath
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			cfg.Listener = ln
			cfg.LogWriter = &testinfra.SyncBuffer{}
			tt.tweak(&cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err = Run(ctx, cfg)
			if err == nil {
				t.Fatal("Run started; want a start-up error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// The example configuration is what this service reads and it is valid.
func TestExampleConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Auth = testinfra.Auth(Name)
	if err := config.Load(filepath.Join("..", "..", "..", "config", "picoclaw.example.yaml"), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Routing.DefaultCodeOrder != "order2" || cfg.Loop.MaxLoops != 3 || cfg.Loop.MaxMillis != 90000 ||
		cfg.Routing.Classifier.MinConfidence != 0.6 || cfg.Routing.Classifier.MinConfidenceForCode != 0.8 ||
		cfg.Agents.Worker.Provider != llm.ProviderOllama || cfg.Channels.Line.ForcedRoute != "" {
		t.Fatalf("example config read as %+v", cfg)
	}
	if _, err := LoadRules(filepath.Join("..", "..", "..", cfg.Routing.RulesFile)); err != nil {
		t.Fatal(err)
	}
}

func TestProcessTask_RuleRouteRunsWorkerOnOllama(t *testing.T) {
	st := startStack(t, func(r fakellm.Request) (string, time.Duration) {
		if isClassifier(r) {
			return classifierAnswer("CHAT", 0.9), 0
		}
		if len(r.Messages) < 4 {
			return strings.Replace(workerJSON(true, "low"), `"needs_next_loop":true`, `"needs_next_loop":true`, 1), 0
		}
		return workerJSON(false, "low"), 0
	}, func(c *Config) { c.Loop.Tools.MaxCalls = 0 })
	for name, client := range map[string]routerv1connect.RouterServiceClient{"connect": st.router, "grpc": st.grpc} {
		t.Run(name, func(t *testing.T) {
			before := len(st.ollama.Requests())
			res, err := client.ProcessTask(context.Background(), &routerv1.ProcessTaskRequest{
				JobId: "job_20260301_011", SessionId: "line:U1", Channel: "line", Text: "このログを集計して傾向を教えて",
			})
			if err != nil {
				t.Fatal(err)
			}
			d := res.GetDecision()
			if d.GetRoute() != commonv1.Route_ROUTE_ANALYZE || d.GetSource() != commonv1.DecisionSource_DECISION_SOURCE_RULE {
				t.Fatalf("decision %v", d)
			}
			if res.GetStopReason() != routerv1.StopReason_STOP_REASON_DONE || res.GetWorkerCalls() != 2 || len(res.GetWorkerOutputs()) != 2 ||
				res.GetFinalRoute() != commonv1.Route_ROUTE_ANALYZE || res.GetWorkerOutputs()[1].GetResult() == "" {
				t.Fatalf("response %v", res)
			}
			seen := st.ollama.Requests()[before:]
			if len(seen) != 2 || classifierCalls(st.ollama) != 0 {
				t.Fatalf("ollama saw %d calls, %d classifier calls", len(seen), classifierCalls(st.ollama))
			}
			for _, r := range seen {
				if r.Model != "worker-v1:latest" || r.Stream || !r.JSON || len(r.Tools) != 0 || r.Options["num_ctx"] != float64(8192) ||
					r.KeepAlive != float64(-1) || !strings.Contains(r.System, "needs_next_loop") {
					t.Fatalf("ollama request %+v", r)
				}
			}
		})
	}
	for _, ev := range []string{"router.decision", "worker.success", "loop.stop", "final.route"} {
		lines := st.logs.Events(ev)
		if len(lines) == 0 {
			t.Errorf("%s not logged", ev)
		}
		for _, l := range lines {
			if l["job_id"] != "job_20260301_011" {
				t.Errorf("%s without job_id: %v", ev, l)
			}
		}
	}
}

// With the executor configured, the worker reads the workspace through its view (with the
// service's identity and the job id) and answers from what it read.
func TestWorkerReadsTheWorkspaceThroughTheExecutor(t *testing.T) {
	st := startStack(t, func(r fakellm.Request) (string, time.Duration) {
		if results := r.ToolResults(); len(results) > 0 {
			if !strings.Contains(results[0].Content, "func Add(a, b int) int") {
				return "the file did not arrive", 0
			}
			return workerJSON(false, "low"), 0
		}
		return callTool + `read_file {"path":"calc.go"}`, 0
	}, nil)
	res, err := st.router.ProcessTask(context.Background(), &routerv1.ProcessTaskRequest{JobId: "job_20260301_012", Channel: "cli", Text: "/analyze calc.go の関数を数えて"})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetStopReason() != routerv1.StopReason_STOP_REASON_DONE || res.GetWorkerCalls() != 1 || res.GetWorkerOutputs()[0].GetResult() == "" {
		t.Fatalf("response %v", res)
	}
	calls := st.view.Calls()
	if len(calls) != 1 || calls[0].Method != "ReadFile" || calls[0].Arg != "calc.go" || calls[0].JobID != "job_20260301_012" {
		t.Errorf("view calls = %+v", calls)
	}
	if reqs := st.ollama.Requests(); len(reqs) != 2 || len(reqs[0].Tools) != 6 {
		t.Errorf("worker requests %d", len(reqs))
	}
	if l := st.logs.Events("llm.tool_call"); len(l) != 1 || l[0]["job_id"] != "job_20260301_012" {
		t.Errorf("llm.tool_call = %v", l)
	}
}

// TestPlainChatIsOneModelCall: a short message without code, URL, file name or request is
// decided by cheap signals — no classifier call, so the chat model's is the only one.
func TestPlainChatIsOneModelCall(t *testing.T) {
	st := startStack(t, func(fakellm.Request) (string, time.Duration) { return classifierAnswer("CHAT", 0.9), 0 }, nil)
	for i, text := range []string{"やあ、元気?", "今日は寒いね", "thanks, that was helpful!"} {
		res, err := st.router.Decide(context.Background(), &routerv1.DecideRequest{JobId: fmt.Sprintf("job_20260301_%03d", 70+i), Channel: "line", Text: text})
		if err != nil {
			t.Fatal(err)
		}
		if d := res.GetDecision(); d.GetRoute() != commonv1.Route_ROUTE_CHAT || d.GetSource() != commonv1.DecisionSource_DECISION_SOURCE_SIGNALS {
			t.Fatalf("%q: decision %v", text, d)
		}
	}
	if n := st.ollama.Calls(); n != 0 {
		t.Fatalf("model calls %d, want 0", n)
	}
	// Switched off, the classifier decides as before.
	off := startStack(t, func(fakellm.Request) (string, time.Duration) { return classifierAnswer("CHAT", 0.9), 0 },
		func(c *Config) { c.Routing.Signals.Enabled = false })
	if _, err := off.router.Decide(context.Background(), &routerv1.DecideRequest{JobId: "job_20260301_080", Channel: "line", Text: "やあ、元気?"}); err != nil {
		t.Fatal(err)
	}
	if classifierCalls(off.ollama) != 1 {
		t.Fatalf("signals off: classifier calls %d", classifierCalls(off.ollama))
	}
}

func TestProcessTask_ClassifierOnOllama(t *testing.T) {
	tests := []struct {
		name       string
		answer     string
		wantRoute  commonv1.Route
		wantSource commonv1.DecisionSource
		wantReason string
		wantMetric []string
	}{
		{"accepted", classifierAnswer("CHAT", 0.9, "挨拶"), commonv1.Route_ROUTE_CHAT, commonv1.DecisionSource_DECISION_SOURCE_CLASSIFIER, "",
			[]string{`picoclaw_router_decisions_total{route="CHAT",source="classifier"} 1`, `picoclaw_llm_calls_total{model="worker-v1:latest",outcome="ok",provider="ollama"} 1`,
				`picoclaw_llm_tokens_total{direction="output",model="worker-v1:latest",provider="ollama"} 34`}},
		{"invalid JSON", `{"route": CHAT}`, commonv1.Route_ROUTE_CHAT, commonv1.DecisionSource_DECISION_SOURCE_FALLBACK, "invalid_json",
			[]string{`picoclaw_router_classifier_errors_total{reason="invalid_json"} 1`, `picoclaw_router_decisions_total{route="CHAT",source="fallback"} 1`}},
		{"CODE at 0.79", classifierAnswer("CODE", 0.79, "x"), commonv1.Route_ROUTE_CHAT, commonv1.DecisionSource_DECISION_SOURCE_FALLBACK, "code_low_confidence",
			[]string{`picoclaw_router_classifier_errors_total{reason="code_low_confidence"} 1`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := startStack(t, func(fakellm.Request) (string, time.Duration) { return tt.answer, 0 }, nil)
			// Request phrasing: cheap signals leave it to the classifier.
			res, err := st.router.Decide(context.Background(), &routerv1.DecideRequest{JobId: "job_20260301_012", Channel: "slack", Text: "ちょっと相談してもいい?"})
			if err != nil {
				t.Fatal(err)
			}
			if res.GetDecision().GetRoute() != tt.wantRoute || res.GetDecision().GetSource() != tt.wantSource {
				t.Fatalf("decision %v", res.GetDecision())
			}
			if classifierCalls(st.ollama) != 1 {
				t.Fatalf("classifier calls %d", classifierCalls(st.ollama))
			}
			errs := st.logs.Events("classifier.error")
			if tt.wantReason == "" && len(errs) != 0 || tt.wantReason != "" && (len(errs) != 1 || errs[0]["reason"] != tt.wantReason || errs[0]["job_id"] != "job_20260301_012") {
				t.Fatalf("classifier.error %v", errs)
			}
			res2, err := http.Get(st.base + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			defer res2.Body.Close()
			var body bytes.Buffer
			_, _ = body.ReadFrom(res2.Body)
			for _, m := range tt.wantMetric {
				if !strings.Contains(body.String(), m) {
					t.Errorf("/metrics lacks %s", m)
				}
			}
		})
	}
}

func TestProcessTask_CodeRoutesThroughCoderOrder(t *testing.T) {
	st := startStack(t, func(fakellm.Request) (string, time.Duration) { return classifierAnswer("CHAT", 0.9), 0 }, nil)
	ctx := context.Background()

	// local_only: refused at decision time, coder-order receives nothing.
	res, err := st.router.ProcessTask(ctx, &routerv1.ProcessTaskRequest{JobId: "job_20260301_020", Text: "/code ソート関数を書いて", LocalOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.GetRefusal(), "/cloud") || len(res.GetProposals()) != 0 || st.coder.calls() != 0 {
		t.Fatalf("local_only: refusal %q proposals %d coder calls %d", res.GetRefusal(), len(res.GetProposals()), st.coder.calls())
	}
	res, err = st.router.ProcessTask(ctx, &routerv1.ProcessTaskRequest{JobId: "job_20260301_021", Text: "/deliberate 認証", LocalOnly: true, Locale: "en"})
	if err != nil || !strings.Contains(res.GetRefusal(), "/cloud") || st.coder.calls() != 0 {
		t.Fatalf("local_only deliberate: %v %v, coder calls %d", res, err, st.coder.calls())
	}

	// CODE → configured default order.
	res, err = st.router.ProcessTask(ctx, &routerv1.ProcessTaskRequest{JobId: "job_20260301_022", Text: "/code ソート関数を書いて",
		History: []*routerv1.Turn{{Role: "user", Text: "Go で"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.coder.propose) != 1 || st.coder.propose[0].GetOrder() != "order2" || st.coder.propose[0].GetJobId() != "job_20260301_022" ||
		st.coder.propose[0].GetTask() != "ソート関数を書いて" || st.coder.propose[0].GetRoute() != commonv1.Route_ROUTE_CODE {
		t.Fatalf("propose request %v", st.coder.propose)
	}
	if len(res.GetProposals()) != 1 || res.GetProposals()[0].GetProposal().GetPlan() == "" || res.GetFinalRoute() != commonv1.Route_ROUTE_CODE {
		t.Fatalf("response %v", res)
	}
	if h := st.coder.headers[0]; !strings.Contains(h.Get("Baggage"), "job_id=job_20260301_022") || h.Get("Traceparent") == "" {
		t.Fatalf("coder-order call without JobID baggage or trace context: %v", h)
	}

	// A coder failure comes back as a result with a stable code.
	res, err = st.router.ProcessTask(ctx, &routerv1.ProcessTaskRequest{JobId: "job_20260301_023", Text: "/code3 難しい最適化"})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.GetProposals(); len(p) != 1 || p[0].GetErrorCode() != "unauthenticated" || p[0].GetOrder() != "order3" {
		t.Fatalf("proposals %v", p)
	}

	// /deliberate → ProposeMany and a comparison with every proposal.
	res, err = st.router.ProcessTask(ctx, &routerv1.ProcessTaskRequest{JobId: "job_20260301_024", Text: "/deliberate main を整理して"})
	if err != nil {
		t.Fatal(err)
	}
	c := res.GetComparison()
	if !res.GetDeliberation() || len(st.coder.many) != 1 || len(res.GetProposals()) != 3 || c == nil || len(c.GetEntries()) != 3 {
		t.Fatalf("deliberation %v", res)
	}
	if strings.Join(c.GetOverlappingPaths(), ",") != "main.go" || c.GetRecommended() != 2 || c.GetEntries()[2].GetErrorCode() != "timeout" ||
		strings.Join(c.GetEntries()[0].GetAffectedPaths(), ",") != "config/a.yaml,main.go" {
		t.Fatalf("comparison %v", c)
	}
	for _, ev := range []string{"deliberation.started", "deliberation.proposal_received", "deliberation.comparison"} {
		lines := st.logs.Events(ev)
		if len(lines) == 0 || lines[0]["job_id"] != "job_20260301_024" {
			t.Errorf("%s: %v", ev, lines)
		}
	}
}

func TestProcessTask_LoopStopsOnOllama(t *testing.T) {
	tests := []struct {
		name   string
		answer func(fakellm.Request) (string, time.Duration)
		tweak  func(*Config)
		stop   routerv1.StopReason
		calls  int32
	}{
		{"max millis spent inside a slow call", func(fakellm.Request) (string, time.Duration) { return workerJSON(true, "low"), 5 * time.Second },
			func(c *Config) { c.Loop.MaxMillis = 300 }, routerv1.StopReason_STOP_REASON_MAX_MILLIS, 1},
		{"max loops", func(fakellm.Request) (string, time.Duration) { return workerJSON(true, "low"), 0 },
			nil, routerv1.StopReason_STOP_REASON_MAX_LOOPS, 3},
		{"invalid JSON", func(fakellm.Request) (string, time.Duration) { return "はい、再起動します。", 0 },
			nil, routerv1.StopReason_STOP_REASON_WORKER_FAILURE, 1},
		{"risk high with questions", func(fakellm.Request) (string, time.Duration) { return workerJSON(true, "high", "本番ですか?"), 0 },
			nil, routerv1.StopReason_STOP_REASON_NEED_USER_CONFIRMATION, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := startStack(t, tt.answer, tt.tweak)
			res, err := st.router.ProcessTask(context.Background(), &routerv1.ProcessTaskRequest{JobId: "job_20260301_030", Text: "nginxを再起動して"})
			if err != nil {
				t.Fatal(err)
			}
			if res.GetDecision().GetRoute() != commonv1.Route_ROUTE_OPS || classifierCalls(st.ollama) != 0 {
				t.Fatalf("decision %v", res.GetDecision())
			}
			if res.GetStopReason() != tt.stop || res.GetWorkerCalls() != tt.calls {
				t.Fatalf("stop %v after %d calls (error %q)", res.GetStopReason(), res.GetWorkerCalls(), res.GetErrorReason())
			}
			if tt.stop == routerv1.StopReason_STOP_REASON_NEED_USER_CONFIRMATION && len(res.GetQuestionsForUser()) != 1 {
				t.Fatalf("questions %v", res.GetQuestionsForUser())
			}
			if tt.stop == routerv1.StopReason_STOP_REASON_WORKER_FAILURE && len(st.logs.Events("worker.fail")) != 1 {
				t.Fatal("worker.fail not logged")
			}
		})
	}
}

func TestProcessTask_InvalidRequests(t *testing.T) {
	st := startStack(t, func(fakellm.Request) (string, time.Duration) { return classifierAnswer("CHAT", 0.9), 0 }, nil)
	for name, req := range map[string]*routerv1.ProcessTaskRequest{
		"empty text": {JobId: "job_20260301_040", Text: "  "},
		"bad job id": {JobId: "job-1", Text: "hi"},
		"bad locale": {JobId: "job_20260301_040", Text: "hi", Locale: "fr"},
	} {
		_, err := st.router.ProcessTask(context.Background(), req)
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("%s: err %v, want invalid_argument", name, err)
		}
	}
}

// The worker on Ollama says the task fits badly and names a better route every time: the
// router moves once, never twice, and the second route's prompt is used from then on.
func TestProcessTask_RerouteOnceOnOllama(t *testing.T) {
	st := startStack(t, func(r fakellm.Request) (string, time.Duration) {
		b, _ := json.Marshal(map[string]any{
			"result": "r", "needs_next_loop": true, "why": "w", "next_actions": []string{}, "questions_for_user": []string{},
			"confidence": 0.9, "risk": "low", "fit": 0.1, "suggested_route": map[bool]string{true: "ANALYZE", false: "RESEARCH"}[strings.Contains(r.System, "planning worker")],
		})
		return string(b), 0
	}, nil)
	res, err := st.router.ProcessTask(context.Background(), &routerv1.ProcessTaskRequest{JobId: "job_20260301_050", Text: "/plan 先月のアクセス"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.GetRerouteUsed() || res.GetInitialRoute() != commonv1.Route_ROUTE_PLAN || res.GetFinalRoute() != commonv1.Route_ROUTE_ANALYZE ||
		res.GetStopReason() != routerv1.StopReason_STOP_REASON_MAX_LOOPS || res.GetWorkerCalls() != 3 {
		t.Fatalf("response %v", res)
	}
	seen := st.ollama.Requests()
	if !strings.Contains(seen[0].System, "planning worker") || !strings.Contains(seen[1].System, "analysis worker") || !strings.Contains(seen[2].System, "analysis worker") {
		t.Fatal("prompts do not follow the reroute")
	}
	if o := st.logs.Events("route.override"); len(o) != 1 || o[0]["from_route"] != "PLAN" || o[0]["to_route"] != "ANALYZE" || o[0]["job_id"] != "job_20260301_050" {
		t.Fatalf("route.override %v", o)
	}
	if f := st.logs.Events("final.route"); len(f) != 1 || f[0]["initial_route"] != "PLAN" || f[0]["final_route"] != "ANALYZE" || f[0]["reroute_used"] != true ||
		f[0]["stop_reason"] != "max_loops" || f[0]["worker_calls"] != float64(3) {
		t.Fatalf("final.route %v", f)
	}
}
