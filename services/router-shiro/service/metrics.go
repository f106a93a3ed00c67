package service

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// metrics are router-shiro's Prometheus series (SPEC §12): decisions, classifier errors, loop
// stops and reroutes, and the worker model's calls, tokens and errors by provider.
type metrics struct {
	decisions        *prometheus.CounterVec
	classifierErrors *prometheus.CounterVec
	loopStops        *prometheus.CounterVec
	reroutes         *prometheus.CounterVec
	llmCalls         *prometheus.CounterVec
	llmTokens        *prometheus.CounterVec
	llmLatency       *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "picoclaw_router_decisions_total", Help: "Route decisions by source and route.",
		}, []string{"source", "route"}),
		classifierErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "picoclaw_router_classifier_errors_total", Help: "Classifier answers not taken, by reason (each falls back to CHAT).",
		}, []string{"reason"}),
		loopStops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "picoclaw_router_loop_stops_total", Help: "Worker loops ended, by stop reason.",
		}, []string{"reason"}),
		reroutes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "picoclaw_router_reroutes_total", Help: "Reroutes taken by the worker loop.",
		}, []string{"from", "to"}),
		llmCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "picoclaw_llm_calls_total", Help: "Model calls by provider, model and result code (ok or error class).",
		}, []string{"provider", "model", "code"}),
		llmTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "picoclaw_llm_tokens_total", Help: "Model tokens by provider, model and direction.",
		}, []string{"provider", "model", "direction"}),
		llmLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "picoclaw_llm_call_duration_seconds", Help: "Model call latency.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 12),
		}, []string{"provider", "model"}),
	}
	for _, c := range []prometheus.Collector{m.decisions, m.classifierErrors, m.loopStops, m.reroutes, m.llmCalls, m.llmTokens, m.llmLatency} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) Decision(source, route string) { m.decisions.WithLabelValues(source, route).Inc() }
func (m *metrics) ClassifierError(reason string) { m.classifierErrors.WithLabelValues(reason).Inc() }
func (m *metrics) LoopStop(reason string)        { m.loopStops.WithLabelValues(reason).Inc() }
func (m *metrics) Reroute(from, to string)       { m.reroutes.WithLabelValues(from, to).Inc() }

// observe is the worker model's llm.Observer.
func (m *metrics) observe(_ context.Context, c llm.Call) {
	code := "ok"
	if c.Err != nil {
		code = llm.Code(c.Err)
	}
	m.llmCalls.WithLabelValues(c.Provider, c.Model, code).Inc()
	m.llmTokens.WithLabelValues(c.Provider, c.Model, "input").Add(float64(c.Usage.InputTokens))
	m.llmTokens.WithLabelValues(c.Provider, c.Model, "output").Add(float64(c.Usage.OutputTokens))
	m.llmLatency.WithLabelValues(c.Provider, c.Model).Observe(c.Latency.Seconds())
}
