package eval_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"

	"github.com/picoclaw-suite/picoclaw/bench/internal/eval"
	"github.com/picoclaw-suite/picoclaw/bench/internal/stats"
	"github.com/picoclaw-suite/picoclaw/bench/internal/suite"
)

const (
	openAIKey    = "sk-eval-test-0123456789abcdef"
	anthropicKey = "sk-ant-eval-test-0123456789abcdef"
	ollamaModel  = "coder-test:latest"
	// Every scripted answer reports this usage.
	promptTokens, completionTokens = 1000, 200
)

var jobInPrompt = regexp.MustCompile(`job_[0-9]{8}_[0-9a-f]{8}`)

// script is what a fake model answers for each task: a proposal with the given patch (an
// answer when empty), or raw text when the answer is not a proposal at all.
type script map[string]struct{ patch, raw string }

// answerer finds the task a request is about by its prompt and answers as scripted.
func answerer(t *testing.T, tasks []eval.Task, s script) fakellm.Answerer {
	return func(req fakellm.Request) fakellm.Answer {
		for _, task := range tasks {
			first, _, _ := strings.Cut(strings.TrimSpace(task.Prompt), "\n")
			if !strings.Contains(req.Text(), first) {
				continue
			}
			a, ok := s[task.ID]
			if !ok {
				t.Errorf("no scripted answer for %s", task.ID)
			}
			content := a.raw
			if content == "" {
				content = proposal(jobInPrompt.FindString(req.Text()), task, a.patch)
			}
			return fakellm.Answer{Content: content, PromptTokens: promptTokens, CompletionTokens: completionTokens}
		}
		t.Errorf("a model call about no task: %.300s", req.Text())
		return fakellm.Answer{Status: 400, ErrorMessage: "unknown task"}
	}
}

func proposal(job string, task eval.Task, patch string) string {
	typ, plan := "codegen", "Change the code as asked: "+task.Title+"."
	if patch == "" {
		typ, plan = "review", "Findings: "+task.Checks.AnswerMentions[0]+"."
	}
	b, _ := json.Marshal(map[string]any{
		"job_id": job, "plan": plan, "patch": patch,
		"risk":          map[string]any{"level": "low", "destructive": false, "compatibility_issues": []string{}, "rollback_possible": true, "notes": ""},
		"cost_hint":     map[string]any{"estimated_tokens": 0, "estimated_cost_usd": 0, "near_limit": false},
		"need_approval": true, "uses_browser": false, "task_type": typ,
	})
	return string(b)
}

// harness is what the runs of the test share: the stores, the built binaries, the tasks.
type harness struct {
	opts  eval.Options
	tasks []eval.Task
}

func newHarness(t *testing.T, ctx context.Context) harness {
	pg := testinfra.Postgres(t)
	rd := testinfra.Redis(t)
	wd, _ := os.Getwd()
	root, err := suite.Root(wd)
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := suite.Build(ctx, root, bin); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(root, "bench", "testdata", "eval")
	tasks, err := eval.LoadTasks(filepath.Join(data, "tasks"))
	if err != nil {
		t.Fatal(err)
	}
	return harness{tasks: tasks, opts: eval.Options{Root: root, BinDir: bin, Fixture: filepath.Join(data, "fixture"),
		CallTimeout: 30 * time.Second, Iso: &suite.Isolation{DSN: pg.DSN, RedisAddr: rd.Addr, RedisPrefix: rd.Prefix}}}
}

// run runs the eval on the named tasks (all when none) with the providers env and base URLs
// make.
func (h harness) run(t *testing.T, ctx context.Context, env, baseURLs map[string]string, ids ...string) *eval.Report {
	t.Helper()
	o := h.opts
	for _, task := range h.tasks {
		if len(ids) == 0 || slices.Contains(ids, task.ID) {
			o.Tasks = append(o.Tasks, task)
		}
	}
	o.Providers = eval.Detect(ctx, eval.DetectOptions{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Models:    map[string]string{llm.ProviderOllama: ollamaModel},
		BaseURLs:  baseURLs,
	})
	o.WorkDir, o.Logf = t.TempDir(), t.Logf
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(t, o.WorkDir)
		}
	})
	return eval.Run(ctx, o)
}

// TestRunMeasuresTruthfully runs the eval against fake OpenAI, Anthropic and Ollama servers
// scripted with known outcomes and checks that the report counts exactly those outcomes:
// first every task's reference change (or answer) through the real binaries, all solved; then
// three tasks with reference changes, a diff whose context does not match, a change that breaks
// the tests, a patch where a review was asked for, an answer that is not a proposal.
func TestRunMeasuresTruthfully(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	h := newHarness(t, ctx)
	sol := map[string]string{}
	references := script{}
	for _, task := range h.tasks {
		sol[task.ID] = task.Solution
		references[task.ID] = struct{ patch, raw string }{patch: task.Solution}
	}
	openai := fakellm.Start(t, fakellm.OpenAI, answerer(t, h.tasks, references), fakellm.WithAPIKey(openAIKey))

	t.Run("reference changes", func(t *testing.T) {
		rep := h.run(t, ctx, map[string]string{"OPENAI_API_KEY": openAIKey}, map[string]string{llm.ProviderOpenAI: openai.URL + "/v1"})
		p := rep.Providers[0]
		n, changes := len(h.tasks), 0
		for _, task := range h.tasks {
			if task.Expect == eval.ExpectPatch {
				changes++
			}
		}
		want := eval.Summary{Tasks: n, Proposals: n, PatchTasks: changes, Patches: changes, Applied: changes, TestsPassed: changes,
			AnswerTasks: n - changes, Answers: n - changes, Solved: n, InputTokens: int64(n) * promptTokens, OutputTokens: int64(n) * completionTokens}
		got := p.Summary
		got.CostUSD, got.Latency = 0, stats.Summary{}
		if p.Name != llm.ProviderOpenAI || got != want {
			t.Errorf("%s: summary\n got %+v\nwant %+v", p.Name, got, want)
		}
		for _, r := range p.Results {
			if !r.Solved {
				t.Errorf("%s: %s (error %q, execution %q, checks %+v)", r.Task, r.Status, r.Error, r.Execution, r.Checks)
			}
		}
		for _, p := range rep.Providers[1:] {
			if p.Skip == "" || len(p.Results) > 0 {
				t.Errorf("%s ran without a key", p.Name)
			}
		}
	})

	t.Run("known outcomes", func(t *testing.T) {
		const divDoc = " // Div returns a / b, truncated toward zero.\n"
		staleContext := strings.Replace(sol["fix-div-by-zero"], divDoc, " // Div divides a by b.\n", 1)
		wrongPercent := strings.Replace(sol["add-percent"], "+\treturn part / whole * 100, nil\n", "+\treturn part / whole, nil\n", 1)
		if staleContext == sol["fix-div-by-zero"] || wrongPercent == sol["add-percent"] {
			t.Fatal("the reference changes no longer have the lines the broken variants edit")
		}
		anthropic := fakellm.Start(t, fakellm.Anthropic, answerer(t, h.tasks, script{
			"fix-div-by-zero": {patch: staleContext}, "add-percent": {patch: wrongPercent}, "review-diff": {patch: sol["add-percent"]},
		}), fakellm.WithAPIKey(anthropicKey))
		ollama := fakellm.Start(t, fakellm.Ollama, answerer(t, h.tasks, script{
			"fix-div-by-zero": {raw: "I would add a check for a zero divisor to Div."}, "add-percent": {patch: sol["add-percent"]}, "review-diff": {},
		}), fakellm.WithModels(ollamaModel), fakellm.WithParameters("num_ctx 16384"))
		openAICalls := openai.Calls()
		rep := h.run(t, ctx, map[string]string{"OPENAI_API_KEY": openAIKey, "ANTHROPIC_API_KEY": anthropicKey, "OLLAMA_HOST": ollama.URL},
			map[string]string{llm.ProviderOpenAI: openai.URL + "/v1", llm.ProviderAnthropic: anthropic.URL},
			"fix-div-by-zero", "add-percent", "review-diff")
		checkKnownOutcomes(t, rep)
		for name, want := range map[string]int{"openai": 3, "anthropic": 3, "ollama": 4} {
			got := map[string]int{"openai": openai.Calls() - openAICalls, "anthropic": anthropic.Calls(), "ollama": ollama.Calls()}[name]
			if got != want {
				t.Errorf("%s fake got %d calls, want %d", name, got, want)
			}
		}
	})
}

func checkKnownOutcomes(t *testing.T, rep *eval.Report) {
	t.Helper()
	want := map[string]struct {
		skip     string
		summary  eval.Summary
		costUSD  float64
		statuses map[string]string
	}{
		"openai": {summary: eval.Summary{Tasks: 3, Proposals: 3, PatchTasks: 2, Patches: 2, Applied: 2, TestsPassed: 2,
			AnswerTasks: 1, Answers: 1, Solved: 3, InputTokens: 3 * promptTokens, OutputTokens: 3 * completionTokens},
			costUSD:  3 * (promptTokens*2.50 + completionTokens*10.00) / 1e6, // gpt-4o
			statuses: map[string]string{"fix-div-by-zero": eval.StatusSolved, "add-percent": eval.StatusSolved, "review-diff": eval.StatusSolved}},
		"deepseek": {skip: "no key (DEEPSEEK_API_KEY not set)"},
		"anthropic": {summary: eval.Summary{Tasks: 3, Proposals: 3, PatchTasks: 2, Patches: 2, Applied: 1, TestsPassed: 0,
			AnswerTasks: 1, Answers: 0, Solved: 0, InputTokens: 3 * promptTokens, OutputTokens: 3 * completionTokens},
			costUSD: 3 * (promptTokens*3.00 + completionTokens*15.00) / 1e6, // claude-sonnet-4-5
			statuses: map[string]string{"fix-div-by-zero": eval.StatusNotApplied, "add-percent": eval.StatusTestsFailed,
				"review-diff": eval.StatusUnexpectedPatch}},
		"ollama": {summary: eval.Summary{Tasks: 3, Proposals: 2, ProposalFailures: 1, PatchTasks: 2, Patches: 1, Applied: 1, TestsPassed: 1,
			AnswerTasks: 1, Answers: 1, Solved: 2, InputTokens: 2 * promptTokens, OutputTokens: 2 * completionTokens},
			statuses: map[string]string{"fix-div-by-zero": eval.StatusProposalFailed, "add-percent": eval.StatusSolved, "review-diff": eval.StatusSolved}},
	}
	if len(rep.Providers) != len(want) {
		t.Fatalf("%d providers reported, want %d", len(rep.Providers), len(want))
	}
	for _, p := range rep.Providers {
		w := want[p.Name]
		if p.Skip != w.skip {
			t.Errorf("%s: skip %q, want %q", p.Name, p.Skip, w.skip)
		}
		got := p.Summary
		if math.Abs(got.CostUSD-w.costUSD) > 1e-9 {
			t.Errorf("%s: cost %v, want %v", p.Name, got.CostUSD, w.costUSD)
		}
		if got.Latency.Count != got.Proposals || (got.Proposals > 0 && got.Latency.Max <= 0) {
			t.Errorf("%s: latency %+v for %d proposals", p.Name, got.Latency, got.Proposals)
		}
		got.CostUSD, got.Latency = 0, w.summary.Latency
		if got != w.summary {
			t.Errorf("%s: summary\n got %+v\nwant %+v", p.Name, got, w.summary)
		}
		for _, r := range p.Results {
			if r.Status != w.statuses[r.Task] {
				t.Errorf("%s/%s: status %s, want %s (error %q, execution %q, checks %+v)", p.Name, r.Task, r.Status,
					w.statuses[r.Task], r.Error, r.Execution, r.Checks)
			}
		}
	}
	// The failed proposal asked once more (the repair attempt) and then gave up.
	if r := result(rep, "ollama", "fix-div-by-zero"); r.ErrorCode == "" || r.Proposed {
		t.Errorf("failed proposal reported as %+v", r)
	}
	// The review that came with a patch was not executed; the answers were recorded by approval.
	if r := result(rep, "anthropic", "review-diff"); r.Applied || r.Outcome != "" {
		t.Errorf("a patch for a review task went on: %+v", r)
	}
	if r := result(rep, "openai", "review-diff"); r.Outcome != "answered" || !r.Answer {
		t.Errorf("the review answer: %+v", r)
	}

	// The report on disk says the same.
	out := t.TempDir()
	if err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "eval.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"| openai | gpt-4o | 3/3 | 3/3 | 2/2 | 2/2 | 1/1 | 3000 / 600 | 0.0135 |",
		"| deepseek | deepseek-chat | skipped: no key (DEEPSEEK_API_KEY not set) |",
		"| anthropic | claude-sonnet-4-5 | 0/3 | 3/3 | 1/2 | 0/2 | 0/1 | 3000 / 600 | 0.0180 |",
		"| ollama | " + ollamaModel + " | 2/3 | 2/3 | 1/2 | 1/2 | 1/1 | 2000 / 400 | 0.0000 |",
	} {
		if !strings.Contains(string(md), line) {
			t.Errorf("eval.md lacks %q:\n%s", line, md)
		}
	}
	var back eval.Report
	if data, err := os.ReadFile(filepath.Join(out, "eval.json")); err != nil || json.Unmarshal(data, &back) != nil ||
		len(back.Providers) != 4 || back.Providers[0].Summary.Solved != 3 {
		t.Errorf("eval.json does not read back: %v", err)
	}
}

func result(rep *eval.Report, provider, task string) eval.TaskResult {
	for _, p := range rep.Providers {
		for _, r := range p.Results {
			if p.Name == provider && r.Task == task {
				return r
			}
		}
	}
	return eval.TaskResult{}
}

// dumpLogs shows the end of every service log of the run.
func dumpLogs(t *testing.T, work string) {
	logs, _ := filepath.Glob(filepath.Join(work, "*", "*", "logs", "*.log"))
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		if len(data) > 3000 {
			data = data[len(data)-3000:]
		}
		t.Logf("--- %s\n%s", l, data)
	}
}
