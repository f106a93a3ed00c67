package report

import (
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/bench/internal/stats"
)

// servicesRun is the report of one services run with the given throughput and CPU figures.
func servicesRun(msgPerSec, cpu, tool, gateway, ackP99 float64) *Report {
	return &Report{
		Webhook: Webhook{Latency: stats.Summary{P99: ackP99}, Errors: 1,
			AckOnly: &Webhook{Latency: stats.Summary{P99: ackP99 / 2}}},
		ChatOverhead: ChatOverhead{Latency: stats.Summary{P50: 2}},
		Throughput:   Throughput{MsgPerSec: msgPerSec, CPUPerMsgMS: cpu, RedisCPUPerMsgMS: 0.25, ToolCPUPerMsgMS: tool},
		Approval:     Approval{Approve: stats.Summary{P99: 4}},
		Services: []Service{
			{Name: "gateway-line", CPUPerMsgMS: gateway, LoadRSSMB: 40},
			{Name: "chat-mio", CPUPerMsgMS: cpu / 3, LoadRSSMB: 30},
			{Name: "approval", CPUPerMsgMS: 0.01, LoadRSSMB: 45},
		},
	}
}

func TestSampleOfTakesTheComparedFigures(t *testing.T) {
	s := SampleOf(servicesRun(900, 1.5, 0.45, 0.6, 3))
	if s.MsgPerSec != 900 || s.CPUPerMsgMS != 1.5 || s.RedisCPUPerMsgMS != 0.25 || s.ToolCPUPerMsgMS != 0.45 ||
		s.AckP99MS != 3 || s.AckOnlyP99MS != 1.5 || s.ChatP50MS != 2 || s.ApproveP99MS != 4 {
		t.Fatalf("sample %+v", s)
	}
	if s.ServiceCPUPerMsgMS["gateway-line"] != 0.6 || s.ServiceCPUPerMsgMS["chat-mio"] != 0.5 {
		t.Fatalf("per service %v", s.ServiceCPUPerMsgMS)
	}
	if _, listed := s.ServiceCPUPerMsgMS["approval"]; listed {
		t.Fatalf("approval is not a compared service: %v", s.ServiceCPUPerMsgMS)
	}
	if s.MaxLoadRSSMB != 45 || s.Errors != 1 {
		t.Fatalf("largest RSS %.1f, errors %d", s.MaxLoadRSSMB, s.Errors)
	}
}

func TestServicesComparisonGivesMediansAndRoundRatios(t *testing.T) {
	a := &ServicesSide{Commit: "aaaa", Samples: []ServicesSample{
		SampleOf(servicesRun(800, 1.6, 0.50, 0.64, 4)), SampleOf(servicesRun(1000, 1.2, 0.40, 0.50, 2)), SampleOf(servicesRun(900, 1.4, 0.45, 0.60, 3))}}
	b := &ServicesSide{Commit: "bbbb", Env: []string{"GOGC=400"}, Samples: []ServicesSample{
		SampleOf(servicesRun(880, 1.44, 0.50, 0.60, 3)), SampleOf(servicesRun(950, 1.26, 0.42, 0.52, 2.5)), SampleOf(servicesRun(990, 1.26, 0.44, 0.54, 2.4))}}
	c := &ServicesComparison{CPUs: 2, Rounds: 3, Phases: "50 CHAT round trips", A: a, B: b}
	var md strings.Builder
	c.Markdown(&md)
	got := md.String()
	for _, want := range []string{
		"A = aaaa, B = bbbb; 3 rounds",
		"B runs with GOGC=400.",
		// Medians: A 900 / B 950 msg/s, CPU 1.4 / 1.26 ms.
		"| answered messages per second (sustained) | 900 | 950 | 1.06 |",
		"| CPU per answered message, services (ms) | 1.400 | 1.260 | 0.90 |",
		"| … gateway-line (ms) | 0.600 | 0.540 | 0.90 |",
		"| … router-shiro (ms) | 0.000 | 0.000 | — |",
		"| webhook ack p99 at 500 req/s, pipeline running (ms) | 3.00 | 2.50 | 0.83 |",
		// Rounds: CPU 1.44/1.6 = 0.90, 1.26/1.2 = 1.05, 1.26/1.4 = 0.90.
		"services' CPU per message 0.90, 1.05, 0.90 (median 0.90; B lower in 2 of 3 rounds)",
		"messages per second 1.10, 0.95, 1.10 (median 1.10; B higher in 2 of 3)",
		// Per the load tool's CPU: (1.44/0.50)/(1.6/0.50) = 0.90, (1.26/0.42)/(1.2/0.40) = 1.00,
		// (1.26/0.44)/(1.4/0.45) = 0.92.
		"in units of the load tool's own in the same run, B / A: 0.90, 1.00, 0.92 (median 0.92; B lower in 2 of 3 rounds)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("comparison lacks %q:\n%s", want, got)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := append([]float64(nil), c.in...)
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Fatalf("Median changed its input: %v", c.in)
			}
		}
	}
}

func TestRoundRatiosAndPerToolCPU(t *testing.T) {
	ratios, lower := RoundRatios([]float64{2, 0, 4, 3}, []float64{1, 5, 4, 0})
	if len(ratios) != 2 || ratios[0] != 0.5 || ratios[1] != 1 || lower != 1 {
		t.Fatalf("ratios %v, lower %d", ratios, lower)
	}
	if PerToolCPU(1.5, 0.5) != 3 || PerToolCPU(1.5, 0) != 0 {
		t.Fatal("PerToolCPU")
	}
	var md strings.Builder
	PerToolLine(&md, "The suite's", []float64{0.9, 1.1, 0.95}, 2)
	if want := "The suite's CPU per message in units of the load tool's own in the same run, B / A: 0.90, 1.10, 0.95 (median 0.95; B lower in 2 of 3 rounds)"; !strings.Contains(md.String(), want) {
		t.Fatalf("got %s", md.String())
	}
}
