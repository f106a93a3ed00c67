package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"

	"connectrpc.com/connect"

	coderv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1/coderv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
)

func TestExampleConfigIsValid(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "picoclaw.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Auth = testinfra.Auth(Name)
	if err := config.Decode(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("example config invalid: %v", err)
	}
	if o := cfg.Orders.Order3; o.Provider != "anthropic" || o.MaxTokens != 16000 || cfg.Deliberation.TimeoutSec != 120 {
		t.Errorf("orders decoded as %+v", cfg.Orders)
	}
	if p := cfg.Orders.Prices["gpt-4o"]; p.InputPerMTok != 2.5 {
		t.Errorf("prices = %+v", cfg.Orders.Prices)
	}
	if tl := cfg.Coders.Tools; tl != llm.DefaultToolsConfig() {
		t.Errorf("coders.tools = %+v, want the defaults written out", tl)
	}
	// max_calls 0 turns the tools off and needs no budget.
	if err := config.Decode([]byte("coders:\n  tools: { max_calls: 0, timeout: 0s }\n"), &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil || cfg.Coders.Tools.MaxCalls != 0 {
		t.Errorf("tools off: %+v %v", cfg.Coders.Tools, err)
	}
}

func TestConfigValidateNamesKeys(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		keys []string
	}{
		{"bad provider", "orders:\n  order1: { provider: gemini }\n", []string{"orders.order1.provider"}},
		{"legacy name", "orders:\n  coder2: { provider: openai, model: gpt-9, enabled: true }\n", []string{"orders.prices"}},
		{"bad default", "orders:\n  default: order7\n", []string{"orders.default"}},
		{"deliberation", "deliberation:\n  max_parallel_orders: 0\n  timeout_sec: -1\n", []string{"deliberation.max_parallel_orders", "deliberation.timeout_sec"}},
		{"retry", "orders:\n  order3: { retry_max: 99 }\n", []string{"orders.order3.retry_max"}},
		{"tools", "coders:\n  tools: { max_calls: 99, timeout: 0s, max_tokens: -1 }\n", []string{"coders.tools.max_calls", "coders.tools.timeout", "coders.tools.max_tokens"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Auth = testinfra.Auth(Name)
			if err := config.Decode([]byte(tc.yaml), &cfg); err != nil {
				t.Fatal(err)
			}
			err := cfg.Validate()
			if err == nil {
				t.Fatal("want an error")
			}
			for _, k := range tc.keys {
				if !strings.Contains(err.Error(), k+":") {
					t.Errorf("error %q does not name %s", err, k)
				}
			}
		})
	}
	// A disabled order needs no price and no key.
	cfg := DefaultConfig()
	cfg.Auth = testinfra.Auth(Name)
	if err := config.Decode([]byte("orders:\n  order2: { model: gpt-unpriced, enabled: false }\n"), &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("disabled order: %v", err)
	}
}

// serve runs coder-order on a free port and returns its base URL.
func serve(t *testing.T, cfg Config) string {
	t.Helper()
	ln := testinfra.Listen(t)
	cfg.Listener = ln
	testinfra.Serve(t, Name, testinfra.URL(ln)+"/readyz", func(ctx context.Context) error { return Run(ctx, cfg) })
	return testinfra.URL(ln)
}

const openAIKey = "sk-proj-SvcT3stK3yAbCdEfGhIjKlMnOpQrSt"

func TestServiceOverConnectAndGRPC(t *testing.T) {
	// order1: offline (deterministic, local); order2: an OpenAI-compatible server that rejects
	// the key; order3: disabled.
	openai := fakellm.Start(t, fakellm.OpenAI, func(fakellm.Request) fakellm.Answer {
		// The provider rejects the key and echoes it: it must not reach logs or replies.
		return fakellm.Answer{Status: http.StatusUnauthorized, ErrorType: "invalid_request_error",
			ErrorCode: "invalid_api_key", ErrorMessage: "Incorrect API key provided: " + openAIKey}
	})
	var logs testinfra.SyncBuffer
	cfg := DefaultConfig()
	cfg.Auth = testinfra.Auth(Name)
	cfg.LogWriter = &logs
	cfg.Orders.Order1.Config.Provider, cfg.Orders.Order1.Config.Model = "offline", "offline"
	cfg.Orders.Order2.Config.BaseURL = openai.URL + "/v1"
	cfg.Orders.Order3.Enabled = false
	cfg.LookupEnv = func(k string) (string, bool) {
		if k == "OPENAI_API_KEY" {
			return openAIKey, true
		}
		return "", false
	}
	url := serve(t, cfg)

	for name, opts := range map[string][]connect.ClientOption{"connect": nil, "grpc": {connect.WithGRPC()}} {
		t.Run(name, func(t *testing.T) {
			client := coderv1connect.NewCoderServiceClient(rpcserver.NewHTTPClient(), url, append(opts, testinfra.AsSuite(t, svcauth.CoderOrder))...)
			ctx := context.Background()

			res, err := client.Propose(ctx, &coderv1.ProposeRequest{JobId: "job_20261121_060", Order: "coder1", Task: "設計メモを書いて", LocalOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			p := res.GetProposal()
			if p.GetJobId() != "job_20261121_060" || p.GetOrder() != "order1" || p.GetProvider() != "offline" || p.GetTaskType() != commonv1.TaskType_TASK_TYPE_DOCS || p.GetRisk().GetLevel() != commonv1.RiskLevel_RISK_LEVEL_LOW {
				t.Errorf("proposal = %v", p)
			}
			if _, err := patch.Parse(p.GetPatch(), patch.Options{}); err != nil {
				t.Errorf("offline patch rejected by pkg/patch: %v", err)
			}

			// Route CODE2 selects order2, which is refused under local_only before any call.
			_, err = client.Propose(ctx, &coderv1.ProposeRequest{JobId: "job_20261121_061", Route: commonv1.Route_ROUTE_CODE2, Task: "x", LocalOnly: true, Locale: "en"})
			assertCode(t, err, connect.CodeFailedPrecondition, "local_only", "/cloud")

			_, err = client.Propose(ctx, &coderv1.ProposeRequest{JobId: "job_20261121_062", Order: "order2", Task: "x"})
			assertCode(t, err, connect.CodeUnauthenticated, "unauthenticated", "APIキー")

			_, err = client.Propose(ctx, &coderv1.ProposeRequest{Order: "order9", Task: "x"})
			assertCode(t, err, connect.CodeInvalidArgument, "unknown_order", "")

			_, err = client.Propose(ctx, &coderv1.ProposeRequest{Order: "order3", Task: "x"})
			assertCode(t, err, connect.CodeFailedPrecondition, "order_disabled", "")

			many, err := client.ProposeMany(ctx, &coderv1.ProposeManyRequest{JobId: "job_20261121_063", Task: "比較して"})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range many.GetResults() {
				got[r.GetOrder()] = r.GetErrorCode()
				if r.GetErrorCode() == "" && r.GetProposal().GetJobId() != "job_20261121_063" {
					t.Errorf("result %v lacks the job id", r)
				}
			}
			if fmt.Sprint(got) != "map[order1: order2:unauthenticated]" {
				t.Errorf("ProposeMany results = %v", got)
			}
		})
	}
	out := logs.String()
	if strings.Contains(out, "SvcT3stK3y") {
		t.Fatalf("key unmasked in service log:\n%s", out)
	}
	for _, ev := range []string{"coder.plan_generated", "deliberation.started", "coder.order_failed", `"job_id":"job_20261121_060"`} {
		if !strings.Contains(out, ev) {
			t.Errorf("service log lacks %s", ev)
		}
	}
}

func assertCode(t *testing.T, err error, code connect.Code, errCode, text string) {
	t.Helper()
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != code {
		t.Fatalf("err = %v, want %v", err, code)
	}
	if text != "" && !strings.Contains(ce.Message(), text) {
		t.Errorf("message %q lacks %q", ce.Message(), text)
	}
	found := false
	for _, d := range ce.Details() {
		v, derr := d.Value()
		if pr, ok := v.(*commonv1.ProposalResult); derr == nil && ok && pr.GetErrorCode() == errCode {
			found = true
		}
	}
	if !found {
		t.Errorf("no ProposalResult detail with error_code %q in %v", errCode, err)
	}
}

func TestEnvOverridesOrderKeys(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Auth = testinfra.Auth(Name)
	env := map[string]string{
		"PICOCLAW_ORDERS_ORDER2_MODEL":       "gpt-4o-mini",
		"PICOCLAW_ORDERS_ORDER1_ENABLED":     "false",
		"PICOCLAW_DELIBERATION_TIMEOUT_SEC":  "30",
		"PICOCLAW_OLLAMA_RESTART_COMMAND":    "systemctl,restart,ollama",
		"PICOCLAW_ORDERS_ORDER3_API_KEY_ENV": "GIN_KEY",
		"PICOCLAW_APPROVAL_COST_LIMIT_USD":   "2.5",
	}
	if err := config.ApplyEnv(&cfg, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if cfg.Orders.Order2.Model != "gpt-4o-mini" || cfg.Orders.Order1.Enabled || cfg.Deliberation.TimeoutSec != 30 ||
		len(cfg.Ollama.RestartCommand) != 3 || cfg.Orders.Order3.APIKeyEnv != "GIN_KEY" || cfg.Approval.CostLimitUSD != 2.5 {
		t.Errorf("env overrides not applied: %+v", cfg)
	}
}
