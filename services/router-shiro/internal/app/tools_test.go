package app

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/ollama"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
	"github.com/picoclaw-suite/picoclaw/pkg/workspace"
	"github.com/picoclaw-suite/picoclaw/pkg/workspace/workspacetest"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

const calcGo = "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b }\n"

// toolRouter is a Router whose worker is a real Ollama client of f, with the read-only tools
// over the executor's view of a small repository.
func toolRouter(t *testing.T, f *fakellm.Server, maxCalls int) (*Router, *workspacetest.Server, *testinfra.SyncBuffer) {
	t.Helper()
	view := workspacetest.Start(t, map[string]string{"calc.go": calcGo, "README.md": "# calc\n", ".env": "DEPLOY_HOOK=zebra-unicorn-7731\n"}, nil)
	worker, err := ollama.New(llm.Config{Model: "worker-v1:latest", BaseURL: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	logs := &testinfra.SyncBuffer{}
	client := workspace.New(view.Client())
	r, err := New(testConfig(), defaultDictionary(t), worker, &fakeCoder{}, slog.New(slog.NewJSONHandler(logs, nil)),
		WithTools(func() Toolset { return client.Tools(workspace.Options{MaxResultBytes: 8 << 10}) }, llm.ToolLimits{MaxCalls: maxCalls}))
	if err != nil {
		t.Fatal(err)
	}
	return r, view, logs
}

// The worker reads a file through the tools before it answers: the result it receives holds
// the file, and the loop goes on as usual.
func TestWorkerUsesTheWorkspaceTools(t *testing.T) {
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Script(
		fakellm.UseTools(fakellm.Call("read_file", map[string]any{"path": "calc.go"})),
		fakellm.Answer{Content: worker(false).text}))
	r, view, logs := toolRouter(t, f, 4)
	ctx := jobid.WithJobID(context.Background(), "job_20260301_090")
	res, err := r.ProcessTask(ctx, Input{JobID: "job_20260301_090", Text: "/analyze calc.go の関数を数えて"})
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalRoute != domain.RouteAnalyze || res.StopReason != domain.StopDone || res.WorkerCalls != 1 || len(res.WorkerOutputs) != 1 {
		t.Fatalf("result %+v", res)
	}
	reqs := f.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model calls = %d", len(reqs))
	}
	if len(reqs[0].Tools) != 6 || reqs[0].JSON || !strings.Contains(reqs[0].System, "read-only tools") || !strings.Contains(reqs[0].System, "needs_next_loop") {
		t.Errorf("first worker request: %d tools, format %v", len(reqs[0].Tools), reqs[0].JSON)
	}
	got := reqs[1].ToolResults()
	if len(got) != 1 || got[0].Name != "read_file" || !strings.Contains(got[0].Content, calcGo) {
		t.Fatalf("results sent back: %+v", got)
	}
	if calls := view.Calls(); len(calls) != 1 || calls[0].Method != "ReadFile" || calls[0].JobID != "job_20260301_090" {
		t.Errorf("view calls = %+v", calls)
	}
	if l := logs.Events("llm.tool_call"); len(l) != 1 || l[0]["job_id"] != "job_20260301_090" || l[0]["tool"] != "read_file" {
		t.Errorf("llm.tool_call = %v", l)
	}
	if l := logs.Events("worker.success"); len(l) != 1 || l[0]["tool_calls"] != float64(1) {
		t.Errorf("worker.success = %v", l)
	}
}

// A worker that keeps asking runs max_calls tools per worker call, then must answer.
func TestWorkerToolLimit(t *testing.T) {
	f := fakellm.Start(t, fakellm.Ollama, func(r fakellm.Request) fakellm.Answer {
		if !r.ToolsAllowed() {
			return fakellm.Answer{Content: worker(false).text}
		}
		return fakellm.UseTools(fakellm.Call("search", map[string]any{"query": "zebra"}))
	})
	r, view, _ := toolRouter(t, f, 2)
	res, err := r.ProcessTask(context.Background(), Input{JobID: "job_20260301_091", Text: "/research このリポジトリの設定"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if res.StopReason != domain.StopDone || len(view.Calls()) != 2 || len(reqs) != 3 || len(reqs[2].Tools) != 0 || !reqs[2].JSON {
		t.Fatalf("stop %s, view calls %d, model calls %d", res.StopReason, len(view.Calls()), len(reqs))
	}
	for _, r := range reqs[2].ToolResults() {
		if r.Content != "(no matches)\n" {
			t.Errorf("search result %q", r.Content)
		}
	}
}
