package workspace

import (
	"context"
	"errors"
	"strings"
	"testing"

	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/workspace/workspacetest"
)

const calcGo = "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b }\n"

// deployHook is a credential redact does not recognise: only the view keeps it from a model.
const deployHook = "https://hooks.example.invalid/zebra-unicorn-7731"

func fixture(t *testing.T, git *workspacetest.Git) *workspacetest.Server {
	return workspacetest.Start(t, map[string]string{
		"calc.go":        calcGo,
		"cmd/main.go":    "package main\n\nfunc main() { println(calc.Add(1, 2)) }\n",
		"docs/notes.md":  "nothing here\n",
		".env":           "DEPLOY_HOOK=" + deployHook + "\n",
		"certs/tls.pem":  "-----BEGIN CERTIFICATE-----\n",
		"docs/big.txt":   strings.Repeat("0123456789abcdef\n", 400),
		"cmd/add_use.go": "package main // uses Add too\n",
	}, git)
}

func run(t *testing.T, tools *Tools, name, args string) (string, error) {
	t.Helper()
	ctx := jobid.WithJobID(context.Background(), "job_20260301_042")
	return tools.Execute(ctx, llm.ToolCall{ID: "c", Name: name, Arguments: args})
}

func TestReadFile(t *testing.T) {
	srv := fixture(t, nil)
	tools := New(srv.Client()).Tools(Options{})
	out, err := run(t, tools, ToolReadFile, `{"path":"calc.go"}`)
	if err != nil {
		t.Fatal(err)
	}
	sum := tools.Seen()["calc.go"]
	if len(sum) != 64 || !strings.HasPrefix(out, "file calc.go (sha256 "+sum+", 5 lines, ") || !strings.Contains(out, calcGo) {
		t.Errorf("read_file = %q", out)
	}
	out, err = run(t, tools, ToolReadFile, `{"path":"calc.go","start_line":3,"end_line":3}`)
	if err != nil || !strings.Contains(out, ", lines 3-3:\nfunc Add(a, b int) int { return a + b }\n") || strings.Contains(out, "Sub") {
		t.Errorf("line range = %q, %v", out, err)
	}
	// The view's refusals are errors the model reads.
	_, err = run(t, tools, ToolReadFile, `{"path":".env"}`)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "holds secrets") || strings.Contains(err.Error(), "zebra") {
		t.Errorf(".env: %v", err)
	}
	if _, err = run(t, tools, ToolReadFile, `{"path":"nope.go"}`); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	if _, err = run(t, tools, ToolReadFile, `{"path":"calc.go","start_line":40}`); !errors.Is(err, ErrRefused) {
		t.Errorf("start beyond the end: %v", err)
	}
	if _, err = run(t, tools, ToolReadFile, `{}`); !errors.Is(err, ErrRefused) {
		t.Errorf("no path: %v", err)
	}
	if _, seen := tools.Seen()[".env"]; seen || len(tools.Seen()) != 1 {
		t.Errorf("seen = %v", tools.Seen())
	}
	for _, c := range srv.Calls() {
		if c.JobID != "job_20260301_042" {
			t.Errorf("%s %s without the job id", c.Method, c.Arg)
		}
	}
}

func TestResultsAreCapped(t *testing.T) {
	tools := New(fixture(t, nil).Client()).Tools(Options{MaxResultBytes: 2048})
	out, err := run(t, tools, ToolReadFile, `{"path":"docs/big.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > 2048+200 || !strings.Contains(out, "cut") {
		t.Errorf("%d bytes: %q", len(out), out[len(out)-120:])
	}
	out, err = run(t, tools, ToolReadFile, `{"path":"docs/big.txt","start_line":399}`)
	if err != nil || strings.Count(out, "0123456789abcdef") != 2 {
		t.Errorf("tail = %q, %v", out, err)
	}
}

func TestSearchAndListTree(t *testing.T) {
	tools := New(fixture(t, nil).Client()).Tools(Options{})
	out, err := run(t, tools, ToolSearch, `{"query":"Add("}`)
	if err != nil || out != "calc.go:3: func Add(a, b int) int { return a + b }\ncmd/main.go:3: func main() { println(calc.Add(1, 2)) }\n" {
		t.Errorf("literal search = %q, %v", out, err)
	}
	out, err = run(t, tools, ToolSearch, `{"query":"^func (Add|Sub)","regexp":true,"path":"."}`)
	if err != nil || strings.Count(out, "\n") != 2 || !strings.Contains(out, "calc.go:5: func Sub") {
		t.Errorf("regexp search = %q, %v", out, err)
	}
	out, err = run(t, tools, ToolSearch, `{"query":"ZEBRA","case_insensitive":true}`)
	if err != nil || out != "(no matches)\n" {
		t.Errorf("secret files are searched: %q, %v", out, err)
	}
	if _, err := run(t, tools, ToolSearch, `{"query":"(","regexp":true}`); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "regexp") {
		t.Errorf("bad regexp: %v", err)
	}
	out, err = run(t, tools, ToolListTree, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"calc.go (", "cmd/\n", "cmd/main.go (", "docs/\n", "(2 files holding secrets are not shown)"} {
		if !strings.Contains(out, want) {
			t.Errorf("list_tree lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, ".env") || strings.Contains(out, "tls.pem") {
		t.Errorf("list_tree shows a secret file:\n%s", out)
	}
	out, err = run(t, tools, ToolListTree, `{"path":"cmd","max_depth":1}`)
	if err != nil || out != "cmd/add_use.go (29 bytes)\ncmd/main.go (54 bytes)\n" {
		t.Errorf("list_tree cmd = %q, %v", out, err)
	}
}

func TestGitTools(t *testing.T) {
	git := &workspacetest.Git{Branch: "main",
		Status:  []*executorv1.GitStatusEntry{{Path: "calc.go", Status: " M"}, {Path: "new.go", Status: "??"}},
		Commits: []*executorv1.GitCommit{{Hash: "abc1234", Author: "Taro", Date: "2026-03-01", Subject: "add calc"}, {Hash: "def5678", Author: "Hana", Date: "2026-02-28", Subject: "init"}},
		Diff:    []*executorv1.DiffFileStat{{Path: "calc.go", Additions: 3, Deletions: 1}, {Path: "logo.png", Binary: true}},
	}
	tools := New(fixture(t, git).Client()).Tools(Options{})
	for _, tc := range []struct{ name, args, want string }{
		{ToolGitStatus, `{}`, "branch main\n M calc.go\n?? new.go\n"},
		{ToolGitLog, `{"max_commits":1}`, "abc1234 2026-03-01 Taro: add calc\n"},
		{ToolGitLog, ``, "abc1234 2026-03-01 Taro: add calc\ndef5678 2026-02-28 Hana: init\n"},
		{ToolDiffSummary, `{}`, "calc.go +3 -1\nlogo.png binary\n"},
	} {
		if out, err := run(t, tools, tc.name, tc.args); err != nil || out != tc.want {
			t.Errorf("%s %s = %q, %v; want %q", tc.name, tc.args, out, err, tc.want)
		}
	}
	plain := New(fixture(t, nil).Client()).Tools(Options{})
	for _, name := range []string{ToolGitStatus, ToolGitLog, ToolDiffSummary} {
		if out, err := run(t, plain, name, `{}`); err != nil || out != "the workspace is not a git repository\n" {
			t.Errorf("%s outside a repository = %q, %v", name, out, err)
		}
	}
	if _, err := run(t, plain, "rm_rf", `{}`); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("unknown tool: %v", err)
	}
	if _, err := run(t, plain, ToolGitLog, `{"max_commits":"many"}`); err == nil {
		t.Error("arguments of the wrong type accepted")
	}
}

func TestSpecsAreObjectSchemas(t *testing.T) {
	specs := New(nil).Tools(Options{}).Specs()
	names := map[string]bool{}
	for _, s := range specs {
		names[s.Name] = true
		if s.Description == "" || s.Parameters["type"] != "object" || s.Parameters["properties"] == nil || s.Parameters["required"] == nil {
			t.Errorf("%s: %+v", s.Name, s)
		}
	}
	for _, n := range []string{ToolListTree, ToolReadFile, ToolSearch, ToolGitStatus, ToolGitLog, ToolDiffSummary} {
		if !names[n] {
			t.Errorf("no spec for %s", n)
		}
	}
}

func TestClientForTheContextPack(t *testing.T) {
	c := New(fixture(t, &workspacetest.Git{Remotes: map[string]string{"origin": "https://git.example.invalid/calc.git"}}).Client())
	ctx := context.Background()
	files, truncated, err := c.ListTree(ctx, 3)
	if err != nil || !truncated || len(files) != 2 {
		t.Errorf("ListTree = %v %v %v", files, truncated, err)
	}
	content, sum, cut, err := c.ReadFile(ctx, "calc.go", 10)
	if err != nil || content != "package ca" || len(sum) != 64 || !cut {
		t.Errorf("ReadFile = %q %q %v %v", content, sum, cut, err)
	}
	if _, _, _, err := c.ReadFile(ctx, "certs/tls.pem", 10); !errors.Is(err, ErrRefused) {
		t.Errorf("secret: %v", err)
	}
	hits, err := c.Search(ctx, `\bAdd\b`, 10)
	if err != nil || strings.Join(hits, ",") != "calc.go,cmd/add_use.go,cmd/main.go" {
		t.Errorf("Search = %v %v", hits, err)
	}
	remotes, err := c.Remotes(ctx)
	if err != nil || remotes["origin"] != "https://git.example.invalid/calc.git" {
		t.Errorf("Remotes = %v %v", remotes, err)
	}
}
