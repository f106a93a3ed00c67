package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/bench/internal/stats"
)

func sample() *Report {
	return &Report{
		Webhook:      Webhook{RateRPS: 500, Latency: stats.Summary{Count: 10, P50: 1, P99: 2.5}},
		ChatOverhead: ChatOverhead{Latency: stats.Summary{Count: 10, P50: 3, P99: 7}},
		Throughput:   Throughput{MsgPerSec: 1200, Answered: 12000, Window: 10},
		Approval:     Approval{Approve: stats.Summary{P99: 6}},
		Services: []Service{
			{Name: "a", ReadyMS: 100, IdleRSSMB: 12, BinaryBytes: 21 << 20},
			{Name: "b", ReadyMS: 350, IdleRSSMB: 14, IdleAnonMB: 4, IdleFileMB: 10, BinaryBytes: 15 << 20},
		},
	}
}

func TestEvaluateMarksEachGoal(t *testing.T) {
	r := sample()
	r.Evaluate()
	want := map[string]bool{
		"Webhook ack p99 at 500 req/s":      true,
		"CHAT overhead p50":                 false,
		"CHAT overhead p99":                 true,
		"Sustained messages":                true,
		"Approve p99":                       false,
		"Idle RSS per service (max)":        true,
		"Start to ready per service (max)":  false,
		"Stripped binary per service (max)": false,
	}
	if len(r.Goals) != len(want) {
		t.Fatalf("goals = %+v", r.Goals)
	}
	for _, g := range r.Goals {
		if met, ok := want[g.Name]; !ok || met != g.Met {
			t.Errorf("goal %q met=%v, want %v (known %v)", g.Name, g.Met, met, ok)
		}
	}
	if r.Goals[6].Measured != "350.00 ms (b)" {
		t.Errorf("ready measured = %q", r.Goals[6].Measured)
	}
	if r.Goals[7].Measured != "21.0 MB (a)" || r.Goals[7].Target != "≤ 20 MB" {
		t.Errorf("binary goal = %+v", r.Goals[7])
	}
}

// The binary goal is on every service: met when each is within it, missed when one is over it or
// was not measured; absent when no size was measured.
func TestBinaryGoalCoversEveryService(t *testing.T) {
	binary := func(r *Report) *Goal {
		for i, g := range r.Goals {
			if g.Name == "Stripped binary per service (max)" {
				return &r.Goals[i]
			}
		}
		return nil
	}
	r := sample()
	r.Services[0].BinaryBytes = 19 << 20
	r.Evaluate()
	if g := binary(r); g == nil || !g.Met || g.Measured != "19.0 MB (a)" {
		t.Errorf("all within: %+v", g)
	}
	r.Services[1].BinaryBytes = 0
	r.Evaluate()
	if g := binary(r); g == nil || g.Met || !strings.Contains(g.Measured, "not measured: b") {
		t.Errorf("one not measured: %+v", g)
	}
	r.Services[0].BinaryBytes = 0
	r.Evaluate()
	if g := binary(r); g != nil {
		t.Errorf("no sizes, yet a goal: %+v", g)
	}
}

func TestErrorsFailTheGoal(t *testing.T) {
	r := sample()
	r.Webhook.Errors = 1
	r.Evaluate()
	if r.Goals[0].Met {
		t.Fatal("webhook goal met despite errors")
	}
}

func TestWriteJSONAndMarkdown(t *testing.T) {
	r := sample()
	r.Notes = []string{"a note"}
	r.Evaluate()
	dir := filepath.Join(t.TempDir(), "results")
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js, &back); err != nil || len(back.Goals) != 8 || back.Throughput.MsgPerSec != 1200 || back.Services[0].BinaryBytes != 21<<20 {
		t.Fatalf("json round trip: %v %+v", err, back)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| CHAT overhead p50 | ≤ 2 ms | 3.00 ms | **missed** |", "| Sustained messages | ≥ 1000 msg/s | 1200 msg/s | met |",
		"| b | 350.0 | 14.0 | 4.0 / 10.0 |", "| 0.000 | 15.0 |", "| Stripped binary per service (max) | ≤ 20 MB | 21.0 MB (a) | **missed** |", "- a note"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
}

func TestExplainNamesTheEvidence(t *testing.T) {
	r := sample()
	r.Host.CPUs = 2
	r.Webhook.Latency.P99 = 9
	r.Webhook.AckOnly = &Webhook{RateRPS: 500, Latency: stats.Summary{P99: 1.5}}
	r.Throughput = Throughput{MsgPerSec: 600, CPUPerMsgMS: 2.2, ToolCPUPerMsgMS: 0.5, CeilingMsgPerSec: 740}
	r.Services[1].IdleRSSMB = 30
	r.Evaluate()
	r.Explain()
	all := strings.Join(r.Notes, "\n")
	for _, s := range []string{"ack path alone", "p99 1.50 ms", "CPU-bound", "~740 msg/s", "CHAT overhead p50: one message costs 2.20 ms",
		"RssAnon) is at most 4.0 MB"} {
		if !strings.Contains(all, s) {
			t.Errorf("notes lack %q:\n%s", s, all)
		}
	}
	if !strings.Contains(all, "Approve: p50 0.00 ms, p99 6.00 ms; one approval is five sequential Postgres round trips") {
		t.Errorf("no approve note:\n%s", all)
	}
	// A missed goal the run has no evidence for gets no note.
	if strings.Contains(all, "Start to ready") {
		t.Errorf("note without evidence: %s", all)
	}
	if strings.Contains(all, "in Redis") {
		t.Errorf("Redis's CPU named though it was not counted:\n%s", all)
	}
}

// Redis's CPU, when the load tool could count it, is named beside the services' and the tool's.
func TestRedisCPUIsNamedWhenCounted(t *testing.T) {
	r := sample()
	r.Host.CPUs = 2
	r.Throughput = Throughput{Answered: 100, Window: 1, InFlight: 8, MsgPerSec: 600, CPUPerMsgMS: 1.5, RedisCPUPerMsgMS: 0.33, ToolCPUPerMsgMS: 0.45, CeilingMsgPerSec: 879}
	r.Evaluate()
	r.Explain()
	if all, want := strings.Join(r.Notes, "\n"), "1.50 ms CPU per message in the services plus 0.33 ms in Redis plus 0.45 ms in the load tool and fakes cap 2 CPUs at ~879 msg/s"; !strings.Contains(all, want) {
		t.Errorf("notes lack %q:\n%s", want, all)
	}
	dir := t.TempDir()
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "CPU per answered message: 1.50 ms in the services + 0.33 ms in Redis + 0.45 ms in the load tool and fakes; 2 CPUs allow at most ~879 msg/s"; !strings.Contains(string(md), want) {
		t.Errorf("markdown lacks %q:\n%s", want, md)
	}
}

func embeddedSample() *Report {
	return &Report{Embedded: &Embedded{
		BinaryBytes: 80 << 20, BuildFlags: "go build -trimpath -ldflags=-s -w",
		Fresh:        StartStop{Runs: 5, Ready: stats.Summary{Count: 5, P50: 95, Max: 120}, Exit: stats.Summary{Count: 5, P50: 6, Max: 9}},
		Idle:         Resources{Memory: ProcMemory{RSSMB: 85, AnonMB: 12, FileMB: 73}, CPUPercent: 0.1, CPUWindow: "10s from 5s after the start"},
		Traffic:      Traffic{Messages: 100, Answered: 100, MsgPerSec: 300, CPUPerMsgMS: 3.5},
		AfterTraffic: Resources{Memory: ProcMemory{RSSMB: 38, AnonMB: 20, FileMB: 18}, CPUPercent: 1.5, CPUWindow: "10s from 5s after the last answer"},
		Later: Resources{Memory: ProcMemory{RSSMB: 45, AnonMB: 21, FileMB: 24, FilePMDMB: 20,
			Go: &GoMemory{HeapInuseMB: 8, HeapFreeMB: 2, StacksMB: 1.5, HeldMB: 15, Goroutines: 70}}},
		AfterSec: 60,
		Data: []DataSnapshot{
			{When: "after the traffic", Files: []DataFile{{"state.db", 4096}, {"state.db-wal", 2048}}},
			{When: "after compact", Files: []DataFile{{"state.db", 3072}}},
		},
	}}
}

// An embedded-only run has the embedded goals only, and the report shows none of the services'
// sections.
func TestEmbeddedGoalsAndSection(t *testing.T) {
	r := embeddedSample()
	r.Evaluate()
	r.Explain()
	want := map[string]bool{
		"Embedded: answers lost / duplicated":                          true,
		"Embedded: idle CPU after the traffic":                         false,
		"Embedded: RSS right after the traffic":                        true,
		"Embedded: RSS 60 s after the traffic: back to the idle level": false,
		"Embedded: stripped binary":                                    false,
	}
	if len(r.Goals) != len(want) {
		t.Fatalf("goals = %+v", r.Goals)
	}
	for _, g := range r.Goals {
		if met, ok := want[g.Name]; !ok || met != g.Met {
			t.Errorf("goal %q met=%v, want %v (known %v)", g.Name, g.Met, met, ok)
		}
	}
	var md strings.Builder
	r.Markdown(&md)
	for _, s := range []string{"# PicoClaw Suite load report: embedded suite\n", "## Embedded suite", "**80.0 MB**", "| Embedded: stripped binary | ≤ 35 MB | 80.0 MB | **missed** |", "| start → ready (banner), empty data directory | 5 | 95.0 | 120.0 |",
		"| 60 s after the traffic | 45.0 | 21.0 / 24.0 | 20.0 |", "| 1.50 (10s from 5s after the last answer) |",
		"| Data directory (KB) | after the traffic | after compact |", "| `state.db-wal` | 2.0 | — |", "| **total** | **6.0** | **3.0** |",
		"RSS 60 s after the traffic: 45.0 MB = 21.0 MB private", "the Go runtime holds 15.0 MB", "6.0 MB is outside it",
		"| 60 s after the traffic | 8.0 | 2.0 | 1.5 | 15.0 | 6.0 | 70 |"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("markdown lacks %q:\n%s", s, md.String())
		}
	}
	for _, s := range []string{"## Services", "## Latencies", "data after the traffic, compacted"} {
		if strings.Contains(md.String(), s) {
			t.Errorf("markdown has %q without its measurement:\n%s", s, md.String())
		}
	}
}

// A lost or duplicated answer, a webhook error or a stray answer each fail the answers goal.
func TestEmbeddedAnswersGoalNeedsEveryMessageAnsweredOnce(t *testing.T) {
	for name, change := range map[string]func(*Traffic){
		"lost":         func(t *Traffic) { t.Lost, t.Answered = 1, 99 },
		"duplicated":   func(t *Traffic) { t.Duplicated = 1 },
		"webhook":      func(t *Traffic) { t.WebhookErrors, t.Answered = 1, 99 },
		"unattributed": func(t *Traffic) { t.Unattributed = 1 },
	} {
		r := embeddedSample()
		change(&r.Embedded.Traffic)
		r.Evaluate()
		if r.Goals[0].Met {
			t.Errorf("%s: answers goal met: %+v", name, r.Goals[0])
		}
	}
}

func TestWriteAsNamesTheFiles(t *testing.T) {
	r := embeddedSample()
	r.Evaluate()
	dir := t.TempDir()
	if err := r.WriteAs(dir, "embedded"); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, "embedded.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js, &back); err != nil || back.Embedded == nil || back.Embedded.Traffic.Answered != 100 || len(back.Embedded.Data) != 2 {
		t.Fatalf("json round trip: %v %+v", err, back.Embedded)
	}
	if _, err := os.Stat(filepath.Join(dir, "embedded.md")); err != nil {
		t.Fatal(err)
	}
}
