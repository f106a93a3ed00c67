package service

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"connectrpc.com/connect"

	coderv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1/coderv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
)

const localCoder = "coder-v1:latest"

func proposalAnswer() string {
	b, _ := json.Marshal(map[string]any{
		"plan":          "README に使い方を追記する",
		"patch":         `[{"type":"file_edit","action":"update","target":"README.md","content":"# Usage\n"}]`,
		"risk":          map[string]any{"level": "low", "destructive": false, "compatibility_issues": []string{}, "rollback_possible": true, "notes": ""},
		"need_approval": false, "uses_browser": false, "task_type": "docs",
	})
	return string(b)
}

// serveLocalOrder runs coder-order with order1 on the fake Ollama and a restart command that
// "restarts" it; the other orders are off.
func serveLocalOrder(t *testing.T, o *fakellm.Server, restartFile string) (coderv1connect.CoderServiceClient, *testinfra.SyncBuffer) {
	t.Helper()
	logs := &testinfra.SyncBuffer{}
	cfg := DefaultConfig()
	cfg.Auth = testinfra.Auth(Name)
	cfg.LogWriter = logs
	cfg.Orders.Default = "order1"
	cfg.Orders.Order1.Config.Provider, cfg.Orders.Order1.Config.Model = "ollama", localCoder
	cfg.Orders.Order2.Enabled, cfg.Orders.Order3.Enabled = false, false
	cfg.Ollama.BaseURL = o.URL
	cfg.Ollama.RestartCommand = []string{"touch", restartFile}
	url := serve(t, cfg)
	return coderv1connect.NewCoderServiceClient(rpcserver.NewHTTPClient(), url, testinfra.AsSuite(t, svcauth.CoderOrder)), logs
}

// An order's Ollama model missing at start is reported then; asked for a proposal, coder-order
// restarts Ollama once and tries the call again.
func TestLocalOrderModelMissingRestartsOllamaOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "restart")
	o := fakellm.Start(t, fakellm.Ollama, fakellm.Reply(proposalAnswer()), fakellm.WithModels(localCoder), fakellm.WithRestartFile(file))
	o.MissingUntilRestart(localCoder)
	client, logs := serveLocalOrder(t, o, file)
	if ev := logs.Events("llm.model_unavailable"); len(ev) != 1 || ev[0]["agent"] != "order1" || ev[0]["model"] != localCoder ||
		ev[0]["fix"] != "picoclaw models setup" {
		t.Errorf("start-up check logged %v", ev)
	}
	res, err := client.Propose(context.Background(), &coderv1.ProposeRequest{JobId: "job_20261121_070", Order: "order1", Task: "README を書いて", LocalOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.GetProposal(); p.GetProvider() != "ollama" || p.GetModel() != localCoder || p.GetPlan() == "" {
		t.Errorf("proposal = %v", p)
	}
	if o.Restarts() != 1 || logs.Count("llm.ollama_restart") != 1 || o.Calls() != 1 {
		t.Errorf("restarts %d (logged %d), model calls %d", o.Restarts(), logs.Count("llm.ollama_restart"), o.Calls())
	}
}

func TestLocalOrderModelStillMissingSaysWhatToRun(t *testing.T) {
	file := filepath.Join(t.TempDir(), "restart")
	o := fakellm.Start(t, fakellm.Ollama, fakellm.Reply(proposalAnswer()), fakellm.WithModels(), fakellm.WithRestartFile(file))
	client, _ := serveLocalOrder(t, o, file)
	for _, id := range []string{"job_20261121_071", "job_20261121_072"} {
		_, err := client.Propose(context.Background(), &coderv1.ProposeRequest{JobId: id, Order: "order1", Task: "README を書いて", LocalOnly: true})
		assertCode(t, err, connect.CodeFailedPrecondition, "model_unavailable", "ローカルモデル coder-v1:latest が Ollama にありません。サーバーで `picoclaw models setup`")
	}
	if o.Restarts() != 1 {
		t.Errorf("restarts = %d, want one (then the cool-down)", o.Restarts())
	}
}
