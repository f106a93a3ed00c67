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
			{Name: "a", ReadyMS: 100, IdleRSSMB: 12},
			{Name: "b", ReadyMS: 350, IdleRSSMB: 19, IdleAnonMB: 4, IdleFileMB: 15},
		},
	}
}

func TestEvaluateMarksEachGoal(t *testing.T) {
	r := sample()
	r.Evaluate()
	want := map[string]bool{
		"Webhook ack p99 at 500 req/s":     true,
		"CHAT overhead p50":                false,
		"CHAT overhead p99":                true,
		"Sustained messages":               true,
		"Approve p99":                      false,
		"Idle RSS per service (max)":       true,
		"Start to ready per service (max)": false,
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
	if err := json.Unmarshal(js, &back); err != nil || len(back.Goals) != 7 || back.Throughput.MsgPerSec != 1200 {
		t.Fatalf("json round trip: %v %+v", err, back)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| CHAT overhead p50 | ≤ 2 ms | 3.00 ms | **missed** |", "| Sustained messages | ≥ 1000 msg/s | 1200 msg/s | met |",
		"| b | 350.0 | 19.0 | 4.0 / 15.0 |", "- a note"} {
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
}
