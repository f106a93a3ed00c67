package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/picoclaw-suite/picoclaw/bench/internal/report"

	"github.com/picoclaw-suite/picoclaw/bench/internal/suite"
)

// compareOptions are the flags of the interleaved comparison of two builds (-compare REF).
type compareOptions struct {
	ref      string
	rounds   int
	messages int
	inFlight int
	// envA and envB are settings for one build only (KEY=VALUE, comma separated), to compare
	// two settings of one build (-compare HEAD with the same tree) as well as two builds.
	envA, envB string
	// services compares the separate services (a whole run of each build per round) instead of
	// the embedded suite.
	services bool
}

func (c *compareOptions) flags() {
	flag.StringVar(&c.ref, "compare", "", "compare the embedded suite built at this git commit (A) with the working tree (B), runs interleaved A, B, A, B …; writes compare.json and compare.md")
	flag.IntVar(&c.rounds, "compare-rounds", 3, "compare: rounds (each runs A, then B)")
	flag.IntVar(&c.messages, "compare-messages", 3000, "compare: LINE text messages per run")
	flag.IntVar(&c.inFlight, "compare-inflight", 32, "compare: messages awaiting their answer at a time")
	flag.StringVar(&c.envA, "compare-env-a", "", "compare: extra KEY=VALUE settings for build A only, comma separated")
	flag.StringVar(&c.envB, "compare-env-b", "", "compare: extra KEY=VALUE settings for build B only, comma separated")
	flag.BoolVar(&c.services, "compare-services", false, "compare: the separate services instead of the embedded suite; each round is a whole run of each build (shorten it with -chat, -slow-chat, -approvals); writes compare-services.json and compare-services.md")
}

// compareSample is what one run of one build measured.
type compareSample struct {
	ReadyMS     float64 `json:"ready_ms"`
	ExitMS      float64 `json:"exit_ms"`
	MsgPerSec   float64 `json:"msg_per_sec"`
	CPUPerMsgMS float64 `json:"cpu_per_msg_ms"`
	// ToolCPUPerMsgMS is the load tool's and the fakes' own CPU per message (this process).
	ToolCPUPerMsgMS float64 `json:"tool_cpu_per_msg_ms"`
	P50MS           float64 `json:"answer_p50_ms"`
	P99MS           float64 `json:"answer_p99_ms"`
	IdleRSSMB       float64 `json:"idle_rss_mb"`
	AfterRSSMB      float64 `json:"after_rss_mb"`
	Lost            int     `json:"lost"`
	Duplicated      int     `json:"duplicated"`
}

// compareSide is one build: its commit, binary size and samples.
type compareSide struct {
	Commit      string          `json:"commit"`
	Env         []string        `json:"env,omitempty"`
	BinaryBytes int64           `json:"binary_bytes"`
	Samples     []compareSample `json:"samples"`
	bin, root   string
}

type compareReport struct {
	StartedAt   time.Time    `json:"started_at"`
	CPUs        int          `json:"cpus"`
	LoadBefore  [3]float64   `json:"load_before"`
	LoadAfter   [3]float64   `json:"load_after"`
	Messages    int          `json:"messages"`
	InFlight    int          `json:"inflight"`
	Rounds      int          `json:"rounds"`
	A           *compareSide `json:"a"`
	B           *compareSide `json:"b"`
	DurationSec float64      `json:"duration_sec"`
}

// runCompare builds the embedded suite at the reference commit and from the working tree, the
// same way (suite.StrippedBuildFlags), and runs them in turn against the same fakes, so noise on
// the machine hits both alike; it prints each figure's median per build and the ratio B/A.
func runCompare(ctx context.Context, o options) error {
	root, _, err := setup(&o)
	if err != nil {
		return err
	}
	co := o.compare
	tmp, err := os.MkdirTemp("", "picoclaw-bench-compare")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	refDir := filepath.Join(tmp, "ref")
	if out, err := exec.CommandContext(ctx, "git", "-C", root, "worktree", "add", "--detach", refDir, co.ref).CombinedOutput(); err != nil {
		return fmt.Errorf("git worktree add %s: %w\n%s", co.ref, err, out)
	}
	defer func() { _ = exec.Command("git", "-C", root, "worktree", "remove", "--force", refDir).Run() }()
	if co.services {
		return compareServices(ctx, o, root, refDir)
	}
	rep := &compareReport{StartedAt: time.Now().UTC(), CPUs: runtime.NumCPU(), LoadBefore: loadAvg(), Messages: co.messages,
		InFlight: co.inFlight, Rounds: co.rounds}
	build := func(root, dir string) (*compareSide, error) {
		logf("building %s", root)
		bin, err := suite.BuildEmbedded(ctx, root, dir)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(bin)
		if err != nil {
			return nil, err
		}
		return &compareSide{Commit: suite.GitCommit(root), BinaryBytes: fi.Size(), bin: bin, root: root}, nil
	}
	if rep.A, err = build(refDir, filepath.Join(tmp, "a")); err != nil {
		return err
	}
	if rep.B, err = build(root, filepath.Join(tmp, "b")); err != nil {
		return err
	}
	rep.A.Env, rep.B.Env = splitEnv(co.envA), splitEnv(co.envB)
	line := suite.NewLineAPI()
	defer line.Close()
	ollama := suite.NewOllama(new(atomic.Int64), o.chatModel, o.workerName)
	defer ollama.Close()
	users := lineUsers(256)
	caEnv, err := line.CAEnv(tmp)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: co.inFlight, IdleConnTimeout: time.Minute}}
	for r := range co.rounds {
		// A then B in odd rounds, B then A in even ones: whatever the run before leaves behind
		// (the disk still writing back its data, a warm page cache) falls on both builds alike.
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			side := []*compareSide{rep.A, rep.B}[i]
			name := fmt.Sprintf("r%d%c", r+1, 'a'+i)
			logf("round %d, build %c (%s)", r+1, 'A'+i, side.Commit)
			opts := suite.EmbeddedOptions{Bin: side.bin, Root: side.root, DataDir: filepath.Join(tmp, name), LineAPI: line.URL,
				Ollama: ollama.URL, LineUsers: users, Env: slices.Concat(caEnv, extraEnv(o), side.Env)}
			s, err := compareOnce(ctx, opts, line, users, client, co, name)
			if err != nil {
				return fmt.Errorf("round %d, build %c: %w", r+1, 'A'+i, err)
			}
			side.Samples = append(side.Samples, s)
		}
	}
	rep.LoadAfter = loadAvg()
	rep.DurationSec = time.Since(rep.StartedAt).Round(time.Second).Seconds()
	return publish(o.out, "compare", rep, rep.markdown)
}

// compareOnce starts one build on a fresh data directory, measures start, idle memory, the
// traffic and the stop.
func compareOnce(ctx context.Context, opts suite.EmbeddedOptions, line *suite.LineAPI, users []string, client *http.Client,
	co compareOptions, run string) (compareSample, error) {
	s, err := suite.StartEmbedded(ctx, opts)
	if err != nil {
		return compareSample{}, err
	}
	defer func() { _, _ = s.Terminate(20 * time.Second) }()
	if _, err := s.AwaitWebhook(client, 10*time.Second); err != nil {
		return compareSample{}, err
	}
	if err := sleep(ctx, 3*time.Second); err != nil {
		return compareSample{}, err
	}
	idle, err := suite.ReadMemory(s.Pid())
	if err != nil {
		return compareSample{}, err
	}
	ledger := suite.NewLedger(co.messages)
	line.Observe(ledger.Record)
	t := embeddedTraffic{hook: suite.Webhook{URL: s.WebhookURL, Client: client}, line: line, ledger: ledger, users: users,
		run: run, exited: s.Done()}
	cpu0, err := suite.ProcessCPU(s.Pid())
	if err != nil {
		return compareSample{}, err
	}
	tool0, err := suite.ProcessCPU(os.Getpid())
	if err != nil {
		return compareSample{}, err
	}
	if err := t.send(ctx, co.messages, co.inFlight); err != nil {
		return compareSample{}, fmt.Errorf("traffic: %w\n%s", err, s.Output())
	}
	end := time.Now()
	cpu1, err := suite.ProcessCPU(s.Pid())
	if err != nil {
		return compareSample{}, err
	}
	tool1, err := suite.ProcessCPU(os.Getpid())
	if err != nil {
		return compareSample{}, err
	}
	after, err := suite.ReadMemory(s.Pid())
	if err != nil {
		return compareSample{}, err
	}
	res := t.result(embeddedOptions{messages: co.messages, users: len(users), inFlight: co.inFlight}, end)
	exit, err := s.Terminate(20 * time.Second)
	if err != nil {
		return compareSample{}, err
	}
	out := compareSample{ReadyMS: ms(s.Ready), ExitMS: ms(exit), MsgPerSec: res.MsgPerSec, P50MS: res.Latency.P50, P99MS: res.Latency.P99,
		IdleRSSMB: mb(idle.RSS), AfterRSSMB: mb(after.RSS), Lost: res.Lost, Duplicated: res.Duplicated}
	if res.Answered > 0 {
		out.CPUPerMsgMS = ms(cpu1-cpu0) / float64(res.Answered)
		out.ToolCPUPerMsgMS = ms(tool1-tool0) / float64(res.Answered)
	}
	logf("%s: %.0f msg/s, %.2f ms CPU/msg, p50 %.1f ms, p99 %.1f ms, RSS %.1f → %.1f MB, lost %d, duplicated %d", run,
		out.MsgPerSec, out.CPUPerMsgMS, out.P50MS, out.P99MS, out.IdleRSSMB, out.AfterRSSMB, out.Lost, out.Duplicated)
	return out, nil
}

// markdown writes the medians per build and the ratios B/A.
func (r *compareReport) markdown(w io.Writer) {
	report.ComparisonHead(w, report.Comparison{What: "embedded suite", StartedAt: r.StartedAt, DurationSec: r.DurationSec, CPUs: r.CPUs,
		LoadBefore: r.LoadBefore, LoadAfter: r.LoadAfter, A: r.A.Commit, B: r.B.Commit, Rounds: r.Rounds,
		Each: fmt.Sprintf("on a fresh data directory: start, 3 s idle, %d LINE messages (%d awaiting their answer), stop", r.Messages, r.InFlight),
		EnvA: r.A.Env, EnvB: r.B.Env})
	row := func(name string, a, b float64, format string) { report.RatioRow(w, name, format, a, b) }
	row("stripped binary (MB)", mb(r.A.BinaryBytes), mb(r.B.BinaryBytes), "%.1f")
	for _, f := range []struct {
		name, format string
		get          func(compareSample) float64
	}{
		{"start → ready (ms)", "%.1f", func(s compareSample) float64 { return s.ReadyMS }},
		{"SIGTERM → exit after the traffic (ms)", "%.1f", func(s compareSample) float64 { return s.ExitMS }},
		{"answered messages per second", "%.0f", func(s compareSample) float64 { return s.MsgPerSec }},
		{"CPU per answered message (ms)", "%.2f", func(s compareSample) float64 { return s.CPUPerMsgMS }},
		{"CPU per answered message, load tool and fakes (ms)", "%.2f", func(s compareSample) float64 { return s.ToolCPUPerMsgMS }},
		{"webhook → answer p50 (ms)", "%.1f", func(s compareSample) float64 { return s.P50MS }},
		{"webhook → answer p99 (ms)", "%.1f", func(s compareSample) float64 { return s.P99MS }},
		{"VmRSS idle (MB)", "%.1f", func(s compareSample) float64 { return s.IdleRSSMB }},
		{"VmRSS right after the traffic (MB)", "%.1f", func(s compareSample) float64 { return s.AfterRSSMB }},
		{"answers lost", "%.0f", func(s compareSample) float64 { return float64(s.Lost) }},
		{"answers duplicated", "%.0f", func(s compareSample) float64 { return float64(s.Duplicated) }},
	} {
		row(f.name, median(r.A.Samples, f.get), median(r.B.Samples, f.get), f.format)
	}
	var runs []string
	for i := range r.A.Samples {
		runs = append(runs, fmt.Sprintf("round %d: A %.0f / B %.0f msg/s, A %.2f / B %.2f ms CPU", i+1, r.A.Samples[i].MsgPerSec,
			r.B.Samples[i].MsgPerSec, r.A.Samples[i].CPUPerMsgMS, r.B.Samples[i].CPUPerMsgMS))
	}
	fmt.Fprintf(w, "\nPer round: %s.\n", strings.Join(runs, "; "))
	perTool := func(side *compareSide) []float64 {
		v := make([]float64, len(side.Samples))
		for i, s := range side.Samples {
			v[i] = report.PerToolCPU(s.CPUPerMsgMS, s.ToolCPUPerMsgMS)
		}
		return v
	}
	ratios, lower := report.RoundRatios(perTool(r.A), perTool(r.B))
	report.PerToolLine(w, "The suite's", ratios, lower)
}

func median(samples []compareSample, get func(compareSample) float64) float64 {
	v := make([]float64, len(samples))
	for i, s := range samples {
		v[i] = get(s)
	}
	return report.Median(v)
}
