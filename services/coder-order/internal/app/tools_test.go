package app

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
	"github.com/picoclaw-suite/picoclaw/pkg/workspace"
	"github.com/picoclaw-suite/picoclaw/pkg/workspace/workspacetest"
)

// deployHook is a credential pkg/redact does not recognise: only the executor's refusal keeps
// it from a model.
const deployHook = "https://hooks.example.invalid/zebra-unicorn-7731"

// viewFixture is the executor's read-only view (its WorkspaceService over Connect) of a small
// repository with a secret file.
func viewFixture(t *testing.T) (*workspacetest.Server, *workspace.Client) {
	t.Helper()
	srv := workspacetest.Start(t, map[string]string{
		"calc.go":     calcGo,
		"cmd/main.go": "package main\n\nfunc main() { println(calc.Add(1, 2)) }\n",
		"README.md":   "# calc\n",
		".env":        "DEPLOY_HOOK=" + deployHook + "\n",
	}, nil)
	return srv, workspace.New(srv.Client())
}

// withTools gives p the view for the context pack and the tools, max calls a proposal.
func withTools(p *Proposer, view *workspace.Client, max int) {
	p.workspace = view
	p.tools = func() ToolSession { return view.Tools(workspace.Options{}) }
	p.toolLimits = llm.ToolLimits{MaxCalls: max}
}

const mulUpdate = "```go:calc.go\npackage calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b }\n\nfunc Mul(a, b int) int { return a * b }\n```\n"

// For each wire, a coder that searches and reads through the tools, then proposes: the
// results it receives hold the file, and the proposal is bound to the file it read.
func TestProposeWithWorkspaceTools(t *testing.T) {
	for _, tc := range []struct{ provider, wire string }{
		{"openai", fakellm.OpenAI}, {"deepseek", fakellm.OpenAI}, {"anthropic", fakellm.Anthropic}, {"ollama", fakellm.Ollama},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			srv, view := viewFixture(t)
			f := fakellm.Start(t, tc.wire, fakellm.Script(
				fakellm.Answer{ToolCalls: []fakellm.ToolCall{fakellm.Call("search", map[string]any{"query": "func Add"})}, PromptTokens: 1000, CompletionTokens: 100},
				fakellm.Answer{ToolCalls: []fakellm.ToolCall{fakellm.Call("read_file", map[string]any{"path": "calc.go"})}, PromptTokens: 1000, CompletionTokens: 100},
				fakellm.Answer{Content: proposalFor(mulUpdate), PromptTokens: 1000, CompletionTokens: 500}))
			url := f.URL
			if tc.wire == fakellm.OpenAI {
				url += "/v1"
			}
			var log bytes.Buffer
			p := newTestProposer(t, &log, Limits{CostUSD: 1, Tokens: 100000}, 0, orderSpec{id: "order2", provider: tc.provider, url: url})
			withTools(p, view, 8)
			ctx := jobid.WithJobID(context.Background(), "job_20261121_060")
			prop, err := p.Propose(ctx, "order2", Task{Text: "掛け算の関数を追加して"})
			if err != nil {
				t.Fatal(err)
			}
			reqs := f.Requests()
			if len(reqs) != 3 {
				t.Fatalf("model calls = %d, want search, read, answer", len(reqs))
			}
			if len(reqs[0].Tools) != 6 || !reqs[0].ToolsAllowed() || !strings.Contains(reqs[0].System, "at most 8 calls") {
				t.Errorf("first request: tools %d allowed %v", len(reqs[0].Tools), reqs[0].ToolsAllowed())
			}
			found := reqs[1].ToolResults()
			if len(found) != 1 || found[0].Name != "search" || !strings.Contains(found[0].Content, "calc.go:3: func Add(a, b int) int { return a + b }") {
				t.Errorf("search result sent back: %+v", found)
			}
			read := reqs[2].ToolResults()
			if len(read) != 2 || read[1].Name != "read_file" || !strings.Contains(read[1].Content, calcGo) || !strings.Contains(read[1].Content, sha(calcGo)) {
				t.Fatalf("read_file result sent back: %+v", read)
			}
			// The context pack came first: the map was listed before any tool ran.
			if calls := srv.Calls(); calls[0].Method != "ListTree" || calls[0].JobID != "job_20261121_060" {
				t.Errorf("view calls = %+v", calls)
			}
			if prop.Base["calc.go"] != sha(calcGo) || prop.Provider != tc.provider {
				t.Errorf("proposal %+v: base %v", prop, prop.Base)
			}
			if prop.Usage.InputTokens != 3000 || prop.Usage.OutputTokens != 700 {
				t.Errorf("usage must add the three calls: %+v", prop.Usage)
			}
			if l := findLog(t, log.String(), "coder.plan_generated"); l["tool_calls"] != float64(2) {
				t.Errorf("coder.plan_generated = %v", l)
			}
			if n := strings.Count(log.String(), `"msg":"llm.tool_call"`); n != 2 {
				t.Errorf("%d llm.tool_call lines", n)
			}
		})
	}
}

// A coder that asks for the secret file, searches for its content and lists the tree gets
// refusals and nothing else: the secret reaches no request of the cloud model.
func TestSecretFileNeverReachesTheCloud(t *testing.T) {
	srv, view := viewFixture(t)
	f := fakellm.Start(t, fakellm.Anthropic, fakellm.Script(
		fakellm.UseTools(fakellm.Call("read_file", map[string]any{"path": ".env"})),
		fakellm.UseTools(fakellm.Call("search", map[string]any{"query": "zebra", "case_insensitive": true}), fakellm.Call("list_tree", map[string]any{})),
		fakellm.UseTools(fakellm.Call("read_file", map[string]any{"path": ".env", "start_line": 1, "end_line": 1})),
		fakellm.Answer{Content: proposalFor(mulUpdate)}))
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{}, 0, orderSpec{id: "order3", provider: "anthropic", url: f.URL})
	withTools(p, view, 8)
	if _, err := p.Propose(context.Background(), "order3", Task{JobID: "job_20261121_061", Text: ".env の DEPLOY_HOOK を使って通知を追加して"}); err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if len(reqs) != 4 {
		t.Fatalf("model calls = %d", len(reqs))
	}
	for i, r := range reqs {
		if strings.Contains(string(r.Raw), "zebra-unicorn") {
			t.Errorf("request %d holds the secret", i)
		}
	}
	results := reqs[3].ToolResults()
	if len(results) != 4 || !results[0].IsError || !strings.Contains(results[0].Content, "holds secrets") ||
		results[1].Content != "(no matches)\n" || !strings.Contains(results[2].Content, "(1 files holding secrets are not shown)") || !results[3].IsError {
		t.Errorf("results = %+v", results)
	}
	// The executor was asked (and refused): the refusal is the executor's, not a filter here.
	refused := 0
	for _, c := range srv.Calls() {
		if c.Method == "ReadFile" && c.Arg == ".env" {
			refused++
		}
	}
	if refused < 2 {
		t.Errorf("the view was asked for .env %d times", refused)
	}
	if strings.Contains(log.String(), "zebra-unicorn") {
		t.Error("the secret reached the log")
	}
}

// A coder that never stops asking runs exactly max_calls tools, then answers without them.
func TestProposeStopsAtMaxToolCalls(t *testing.T) {
	_, view := viewFixture(t)
	f := fakellm.Start(t, fakellm.OpenAI, func(r fakellm.Request) fakellm.Answer {
		if !r.ToolsAllowed() {
			return fakellm.Answer{Content: proposalFor(mulUpdate)}
		}
		return fakellm.UseTools(fakellm.Call("read_file", map[string]any{"path": "calc.go"}))
	})
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{}, 0, orderSpec{id: "order2", provider: "openai", url: f.URL + "/v1"})
	withTools(p, view, 3)
	prop, err := p.Propose(context.Background(), "order2", Task{JobID: "job_20261121_062", Text: "掛け算を追加して"})
	if err != nil {
		t.Fatal(err)
	}
	reads := strings.Count(log.String(), `"msg":"llm.tool_call"`)
	reqs := f.Requests()
	if reads != 3 || len(reqs) != 4 || reqs[3].ToolsAllowed() || reqs[3].ToolChoice != "none" {
		t.Fatalf("reads %d, model calls %d", reads, len(reqs))
	}
	last := reqs[3].Messages[len(reqs[3].Messages)-1]
	if !strings.Contains(last.Content, "at most 3 tool calls") {
		t.Errorf("the coder is not told: %+v", last)
	}
	if prop.Base["calc.go"] != sha(calcGo) {
		t.Errorf("base %v", prop.Base)
	}
}

// The tool phase stays within half the approval token limit: past it the coder must answer.
func TestToolPhaseKeepsToTheTokenLimit(t *testing.T) {
	_, view := viewFixture(t)
	f := fakellm.Start(t, fakellm.OpenAI, func(r fakellm.Request) fakellm.Answer {
		if !r.ToolsAllowed() {
			return fakellm.Answer{Content: proposalFor(mulUpdate), PromptTokens: 1000, CompletionTokens: 500}
		}
		a := fakellm.UseTools(fakellm.Call("read_file", map[string]any{"path": "calc.go"}))
		a.PromptTokens, a.CompletionTokens = 1400, 100
		return a
	})
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{Tokens: 3000}, 0, orderSpec{id: "order2", provider: "openai", url: f.URL + "/v1"})
	withTools(p, view, 8)
	prop, err := p.Propose(context.Background(), "order2", Task{JobID: "job_20261121_063", Text: "掛け算を追加して"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if len(reqs) != 2 || reqs[1].ToolsAllowed() || !strings.Contains(reqs[1].Messages[len(reqs[1].Messages)-1].Content, "budget of 1500 tokens") {
		t.Fatalf("model calls %d", len(reqs))
	}
	if !prop.CostHint.NearLimit {
		t.Errorf("3000 tokens of a 3000 limit must be near_limit: %+v", prop.CostHint)
	}
}

// Orders whose provider cannot call tools (offline), and tools turned off, get none.
func TestNoToolsWithoutAToolProvider(t *testing.T) {
	_, view := viewFixture(t)
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{}, 0, orderSpec{id: "order1", provider: "offline"})
	opened := 0
	withTools(p, view, 8)
	p.tools = func() ToolSession { opened++; return view.Tools(workspace.Options{}) }
	if _, err := p.Propose(context.Background(), "order1", Task{Text: "メモ"}); err != nil || opened != 0 {
		t.Errorf("offline: opened %d, %v", opened, err)
	}
	f := fakellm.Start(t, fakellm.OpenAI, fakellm.Reply(validAnswer(nil)))
	p = newTestProposer(t, &log, Limits{}, 0, orderSpec{id: "order2", provider: "openai", url: f.URL + "/v1"})
	withTools(p, view, 0)
	if _, err := p.Propose(context.Background(), "order2", Task{Text: "メモ"}); err != nil || len(f.Requests()[0].Tools) != 0 ||
		strings.Contains(f.Requests()[0].System, "read-only tools") {
		t.Errorf("max_calls 0: tools %v, %v", f.Requests()[0].Tools, err)
	}
}

// The repair of an answer that followed tool calls keeps the conversation, tools declared
// but not callable (Anthropic refuses tool blocks without tools).
func TestRepairAfterToolUse(t *testing.T) {
	_, view := viewFixture(t)
	f := fakellm.Start(t, fakellm.Anthropic, fakellm.Script(
		fakellm.UseTools(fakellm.Call("read_file", map[string]any{"path": "calc.go"})),
		fakellm.Answer{Content: validAnswer(map[string]any{"plan": nil})},
		fakellm.Answer{Content: proposalFor(mulUpdate)}))
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{}, 0, orderSpec{id: "order3", provider: "anthropic", url: f.URL})
	withTools(p, view, 8)
	prop, err := p.Propose(context.Background(), "order3", Task{JobID: "job_20261121_064", Text: "掛け算を追加して"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	if !prop.Repaired || len(reqs) != 3 {
		t.Fatalf("repaired %v after %d calls", prop.Repaired, len(reqs))
	}
	repair := reqs[2]
	if repair.ToolsAllowed() || len(repair.Tools) != 6 || len(repair.ToolResults()) != 1 || !strings.Contains(repair.Text(), "missing field plan") {
		t.Errorf("repair request: tools %d choice %q results %d", len(repair.Tools), repair.ToolChoice, len(repair.ToolResults()))
	}
	if prop.Base["calc.go"] != sha(calcGo) {
		t.Errorf("base %v", prop.Base)
	}
}
