package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// ComparedServices are the services whose CPU per message a comparison of two builds lists one
// by one: the ones a plain chat message goes through.
var ComparedServices = []string{"gateway-line", "chat-mio", "router-shiro"}

// ServicesSample is what one run of the separate services measured, taken from its report.
type ServicesSample struct {
	MsgPerSec        float64 `json:"msg_per_sec"`
	CPUPerMsgMS      float64 `json:"cpu_per_msg_ms"`
	RedisCPUPerMsgMS float64 `json:"redis_cpu_per_msg_ms"`
	ToolCPUPerMsgMS  float64 `json:"tool_cpu_per_msg_ms"`
	AckP99MS         float64 `json:"ack_p99_ms"`
	AckOnlyP99MS     float64 `json:"ack_only_p99_ms"`
	ChatP50MS        float64 `json:"chat_p50_ms"`
	ApproveP99MS     float64 `json:"approve_p99_ms"`
	// ServiceCPUPerMsgMS is the CPU per message of each of ComparedServices.
	ServiceCPUPerMsgMS map[string]float64 `json:"service_cpu_per_msg_ms"`
	// MaxLoadRSSMB is the largest RSS any service reached under load.
	MaxLoadRSSMB float64 `json:"max_load_rss_mb"`
	Errors       int     `json:"errors"`
}

// SampleOf takes the figures a comparison lists from the report of one run.
func SampleOf(r *Report) ServicesSample {
	s := ServicesSample{MsgPerSec: r.Throughput.MsgPerSec, CPUPerMsgMS: r.Throughput.CPUPerMsgMS,
		RedisCPUPerMsgMS: r.Throughput.RedisCPUPerMsgMS, ToolCPUPerMsgMS: r.Throughput.ToolCPUPerMsgMS,
		AckP99MS: r.Webhook.Latency.P99, ChatP50MS: r.ChatOverhead.Latency.P50, ApproveP99MS: r.Approval.Approve.P99,
		ServiceCPUPerMsgMS: map[string]float64{},
		Errors:             r.Throughput.Errors + r.Webhook.Errors + r.ChatOverhead.Errors}
	if r.Webhook.AckOnly != nil {
		s.AckOnlyP99MS = r.Webhook.AckOnly.Latency.P99
		s.Errors += r.Webhook.AckOnly.Errors
	}
	for _, svc := range r.Services {
		if slices.Contains(ComparedServices, svc.Name) {
			s.ServiceCPUPerMsgMS[svc.Name] = svc.CPUPerMsgMS
		}
		s.MaxLoadRSSMB = max(s.MaxLoadRSSMB, svc.LoadRSSMB)
	}
	return s
}

// ServicesSide is one build of a comparison: its commit, the settings it ran with and its runs.
type ServicesSide struct {
	Commit  string           `json:"commit"`
	Env     []string         `json:"env,omitempty"`
	Samples []ServicesSample `json:"samples"`
}

// ServicesComparison is two builds of the separate services run in turn on the same machine
// (picoclaw-bench -compare REF -compare-services).
type ServicesComparison struct {
	StartedAt   time.Time     `json:"started_at"`
	DurationSec float64       `json:"duration_sec"`
	CPUs        int           `json:"cpus"`
	LoadBefore  [3]float64    `json:"load_before"`
	LoadAfter   [3]float64    `json:"load_after"`
	Rounds      int           `json:"rounds"`
	Phases      string        `json:"phases"`
	A           *ServicesSide `json:"a"`
	B           *ServicesSide `json:"b"`
}

// servicesFigure is one row of the comparison.
type servicesFigure struct {
	name, format string
	get          func(ServicesSample) float64
}

func servicesFigures() []servicesFigure {
	f := []servicesFigure{
		{"answered messages per second (sustained)", "%.0f", func(s ServicesSample) float64 { return s.MsgPerSec }},
		{"CPU per answered message, services (ms)", "%.3f", func(s ServicesSample) float64 { return s.CPUPerMsgMS }},
	}
	for _, name := range ComparedServices {
		f = append(f, servicesFigure{"… " + name + " (ms)", "%.3f", func(s ServicesSample) float64 { return s.ServiceCPUPerMsgMS[name] }})
	}
	return append(f,
		servicesFigure{"CPU per answered message, Redis (ms)", "%.3f", func(s ServicesSample) float64 { return s.RedisCPUPerMsgMS }},
		servicesFigure{"CPU per answered message, load tool and fakes (ms)", "%.3f", func(s ServicesSample) float64 { return s.ToolCPUPerMsgMS }},
		servicesFigure{"webhook ack p99 at 500 req/s, pipeline running (ms)", "%.2f", func(s ServicesSample) float64 { return s.AckP99MS }},
		servicesFigure{"webhook ack p99 at 500 req/s, ack path only (ms)", "%.2f", func(s ServicesSample) float64 { return s.AckOnlyP99MS }},
		servicesFigure{"CHAT webhook → reply p50, one at a time (ms)", "%.2f", func(s ServicesSample) float64 { return s.ChatP50MS }},
		servicesFigure{"approve p99 (ms)", "%.2f", func(s ServicesSample) float64 { return s.ApproveP99MS }},
		servicesFigure{"largest RSS of a service under load (MB)", "%.1f", func(s ServicesSample) float64 { return s.MaxLoadRSSMB }},
		servicesFigure{"errors", "%.0f", func(s ServicesSample) float64 { return float64(s.Errors) }},
	)
}

// Markdown writes the medians per build, their ratio B / A and, for the CPU per message and the
// throughput, the median of the rounds' own ratios with the rounds in which B was lower: each
// round runs both builds within a few minutes, so its ratio carries where the machine's speed
// between rounds does not.
func (c *ServicesComparison) Markdown(w io.Writer) {
	ComparisonHead(w, Comparison{What: "separate services", StartedAt: c.StartedAt, DurationSec: c.DurationSec, CPUs: c.CPUs,
		LoadBefore: c.LoadBefore, LoadAfter: c.LoadAfter, A: c.A.Commit, B: c.B.Commit, Rounds: c.Rounds,
		Each: "a whole run of the eight services on Redis and Postgres against the fakes: " + c.Phases, EnvA: c.A.Env, EnvB: c.B.Env})
	for _, f := range servicesFigures() {
		RatioRow(w, f.name, f.format, servicesMedian(c.A.Samples, f.get), servicesMedian(c.B.Samples, f.get))
	}
	cpu := func(s ServicesSample) float64 { return s.CPUPerMsgMS }
	rate := func(s ServicesSample) float64 { return s.MsgPerSec }
	ratios, lower := c.roundRatios(cpu)
	fmt.Fprintf(w, "\nRound by round, B / A: services' CPU per message %s (median %.2f; B lower in %d of %d rounds)", joinRatios(ratios),
		Median(ratios), lower, len(ratios))
	ratios, _ = c.roundRatios(rate)
	higher := 0
	for _, r := range ratios {
		if r > 1 {
			higher++
		}
	}
	fmt.Fprintf(w, ", messages per second %s (median %.2f; B higher in %d of %d).\n", joinRatios(ratios), Median(ratios), higher, len(ratios))
	ratios, lower = c.roundRatios(func(s ServicesSample) float64 { return PerToolCPU(s.CPUPerMsgMS, s.ToolCPUPerMsgMS) })
	PerToolLine(w, "The services'", ratios, lower)
}

// roundRatios are get's B / A of each round (RoundRatios).
func (c *ServicesComparison) roundRatios(get func(ServicesSample) float64) (ratios []float64, lower int) {
	return RoundRatios(servicesValues(c.A.Samples, get), servicesValues(c.B.Samples, get))
}

func joinRatios(ratios []float64) string {
	parts := make([]string, len(ratios))
	for i, r := range ratios {
		parts[i] = fmt.Sprintf("%.2f", r)
	}
	return strings.Join(parts, ", ")
}

func servicesValues(samples []ServicesSample, get func(ServicesSample) float64) []float64 {
	v := make([]float64, len(samples))
	for i, s := range samples {
		v[i] = get(s)
	}
	return v
}

func servicesMedian(samples []ServicesSample, get func(ServicesSample) float64) float64 {
	return Median(servicesValues(samples, get))
}
