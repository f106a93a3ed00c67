package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/bench/internal/stats"
)

// Statuses of a task result.
const (
	// StatusSolved: every check passed (a change applied and tested, or an answer given).
	StatusSolved = "solved"
	// StatusProposalFailed: coder-order returned no proposal (provider error, invalid answer
	// after the repair attempt, cost limit).
	StatusProposalFailed = "proposal_failed"
	// StatusNoPatch: an answer without a patch where a change was asked for.
	StatusNoPatch = "no_patch"
	// StatusUnexpectedPatch: a change where only an answer was asked for (not executed).
	StatusUnexpectedPatch = "unexpected_patch"
	// StatusRefused: approval refused the proposal (policy or invalid patch).
	StatusRefused = "refused"
	// StatusNotApplied: the executor did not apply the change cleanly.
	StatusNotApplied = "not_applied"
	// StatusTestsFailed: applied, but `go test ./...` fails.
	StatusTestsFailed = "tests_failed"
	// StatusChecksFailed: the tests pass (or an answer was given) but another check fails.
	StatusChecksFailed = "checks_failed"
	// StatusHarnessError: the eval itself failed on this task (not the coder's doing).
	StatusHarnessError = "harness_error"
)

// Report is one eval run.
type Report struct {
	StartedAt   time.Time        `json:"started_at"`
	DurationSec float64          `json:"duration_sec"`
	Commit      string           `json:"commit,omitempty"`
	Tasks       []TaskInfo       `json:"tasks"`
	Providers   []ProviderReport `json:"providers"`
}

// TaskInfo describes a task of the run.
type TaskInfo struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Title  string `json:"title"`
	Expect string `json:"expect"`
}

// ProviderReport is one provider's results.
type ProviderReport struct {
	Provider
	Summary Summary      `json:"summary"`
	Results []TaskResult `json:"results,omitempty"`
}

// Summary counts a provider's results.
type Summary struct {
	Tasks            int `json:"tasks"`
	Proposals        int `json:"proposals"`
	ProposalFailures int `json:"proposal_failures"`
	// PatchTasks ask for a change: Patches proposed one, Applied were applied cleanly by the
	// executor, TestsPassed pass `go test ./...` (hidden tests included) after the change.
	PatchTasks  int `json:"patch_tasks"`
	Patches     int `json:"patches"`
	Applied     int `json:"applied"`
	TestsPassed int `json:"tests_passed"`
	// AnswerTasks ask for a review or design: Answers were given without a patch.
	AnswerTasks int `json:"answer_tasks"`
	Answers     int `json:"answers"`
	// Solved passed every check of their task.
	Solved        int `json:"solved"`
	HarnessErrors int `json:"harness_errors"`
	// Tokens and cost are coder-order's usage and cost hint of the proposals made.
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	// Latency is the wall time of each proposal made, as the caller saw it.
	Latency stats.Summary `json:"latency"`
}

// TaskResult is one task's outcome for one provider.
type TaskResult struct {
	Task   string `json:"task"`
	Kind   string `json:"kind"`
	Expect string `json:"expect"`
	JobID  string `json:"job_id"`
	Status string `json:"status"`
	Solved bool   `json:"solved"`
	// Error is the proposal's, approval's or the harness's error; ErrorCode coder-order's code.
	Error     string `json:"error,omitempty"`
	ErrorCode string `json:"error_code,omitempty"`
	Proposed  bool   `json:"proposed"`
	// Answer: the proposal had no patch.
	Answer bool   `json:"answer"`
	Plan   string `json:"plan,omitempty"`
	Patch  string `json:"patch,omitempty"`
	// Outcome is approval's (pending, auto_approved, refused, answered).
	Outcome   string        `json:"outcome,omitempty"`
	Applied   bool          `json:"applied"`
	Execution string        `json:"execution,omitempty"`
	Checks    []CheckResult `json:"checks,omitempty"`

	InputTokens    int64   `json:"input_tokens"`
	OutputTokens   int64   `json:"output_tokens"`
	CostUSD        float64 `json:"cost_usd"`
	LatencyMS      float64 `json:"latency_ms"`
	ModelLatencyMS int64   `json:"model_latency_ms"`
	// Dir holds the workspace and the service logs.
	Dir string `json:"dir"`
}

func (r TaskResult) passed(check string) bool {
	for _, c := range r.Checks {
		if c.Name == check {
			return c.OK
		}
	}
	return false
}

func summarize(results []TaskResult) Summary {
	var s Summary
	var lat []time.Duration
	for _, r := range results {
		s.Tasks++
		if r.Expect == ExpectPatch {
			s.PatchTasks++
		} else {
			s.AnswerTasks++
		}
		switch r.Status {
		case StatusProposalFailed:
			s.ProposalFailures++
		case StatusHarnessError:
			s.HarnessErrors++
		}
		if r.Solved {
			s.Solved++
		}
		if !r.Proposed {
			continue
		}
		s.Proposals++
		s.InputTokens += r.InputTokens
		s.OutputTokens += r.OutputTokens
		s.CostUSD += r.CostUSD
		lat = append(lat, time.Duration(r.LatencyMS*float64(time.Millisecond)))
		switch {
		case r.Expect == ExpectPatch && !r.Answer:
			s.Patches++
		case r.Expect == ExpectAnswer && r.Answer:
			s.Answers++
		}
		if r.Applied {
			s.Applied++
			if r.passed(CheckGoTest) {
				s.TestsPassed++
			}
		}
	}
	s.Latency = stats.Summarize(lat)
	return s
}

// HarnessErrors counts the tasks the eval itself failed on.
func (r *Report) HarnessErrors() int {
	n := 0
	for _, p := range r.Providers {
		n += p.Summary.HarnessErrors
	}
	return n
}

// Write saves the report as eval.json and eval.md in dir.
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "eval.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "eval.md"))
	if err != nil {
		return err
	}
	r.Markdown(f)
	return f.Close()
}

// Markdown writes the report: the summary table, then each provider's tasks.
func (r *Report) Markdown(w io.Writer) {
	patches, answers := 0, 0
	for _, t := range r.Tasks {
		if t.Expect == ExpectPatch {
			patches++
		} else {
			answers++
		}
	}
	fmt.Fprintf(w, "# Coder eval\n\nRun %s, %.0f s", r.StartedAt.Format(time.RFC3339), r.DurationSec)
	if r.Commit != "" {
		fmt.Fprintf(w, ", commit %s", r.Commit)
	}
	fmt.Fprintf(w, "; %d tasks (%d changes, %d questions to answer without a patch). Each task runs on a fresh copy of the fixture with fresh approval, executor and coder-order processes; the provider is order1.\n\n", len(r.Tasks), patches, answers)
	r.SummaryTable(w)
	fmt.Fprintf(w, "\nApplied and Tests pass count the change tasks, Answers the review and design tasks (an answer without a patch). "+
		"Tokens and cost are coder-order's usage and cost hint of the proposals made; latency is each proposal's wall time.\n")
	for _, p := range r.Providers {
		if p.Skip != "" {
			continue
		}
		fmt.Fprintf(w, "\n## %s (%s)\n\n| Task | Kind | Result | Tokens in / out | Cost (USD) | Latency (s) | Notes |\n|---|---|---|---|---|---|---|\n", p.Name, p.Model)
		for _, t := range p.Results {
			fmt.Fprintf(w, "| %s | %s | %s | %d / %d | %.4f | %.1f | %s |\n", t.Task, t.Kind, t.Status,
				t.InputTokens, t.OutputTokens, t.CostUSD, t.LatencyMS/1000, cell(t.note(), 200))
		}
	}
}

// SummaryTable writes one row per provider.
func (r *Report) SummaryTable(w io.Writer) {
	fmt.Fprintln(w, "| Provider | Model | Solved | Proposals | Applied | Tests pass | Answers | Tokens in / out | Cost (USD) | Latency p50 / max (s) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, p := range r.Providers {
		if p.Skip != "" {
			fmt.Fprintf(w, "| %s | %s | skipped: %s |  |  |  |  |  |  |  |\n", p.Name, p.Model, cell(p.Skip, 120))
			continue
		}
		s := p.Summary
		fmt.Fprintf(w, "| %s | %s | %d/%d | %d/%d | %d/%d | %d/%d | %d/%d | %d / %d | %.4f | %.1f / %.1f |\n",
			p.Name, p.Model, s.Solved, s.Tasks, s.Proposals, s.Tasks, s.Applied, s.PatchTasks, s.TestsPassed, s.PatchTasks,
			s.Answers, s.AnswerTasks, s.InputTokens, s.OutputTokens, s.CostUSD, s.Latency.P50/1000, s.Latency.Max/1000)
	}
}

// note says why a task was not solved.
func (r TaskResult) note() string {
	var parts []string
	if r.Error != "" {
		parts = append(parts, strings.TrimSpace(r.ErrorCode+" "+r.Error))
	}
	switch {
	case r.Status == StatusNotApplied && r.Execution != "":
		parts = append(parts, r.Execution)
	case r.Status == StatusUnexpectedPatch:
		parts = append(parts, "a patch where an answer was asked for (not executed)")
	case r.Status == StatusNoPatch:
		parts = append(parts, "an answer without a patch: "+r.Plan)
	}
	for _, c := range r.Checks {
		if !c.OK {
			parts = append(parts, c.Name+": "+c.Detail)
		}
	}
	return strings.Join(parts, "; ")
}

// cell makes text fit one Markdown table cell.
func cell(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}
