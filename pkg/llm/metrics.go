package llm

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts LLM calls, tokens and errors by provider (SPEC §12).
type Metrics struct {
	calls   *prometheus.CounterVec
	tokens  *prometheus.CounterVec
	latency *prometheus.HistogramVec
}

// NewMetrics registers the LLM metrics on reg; pass Observe to WithObserver. Registering twice
// on one registry reuses the existing collectors.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "picoclaw_llm_calls_total", Help: "LLM calls by provider, model and outcome (ok or error code).",
		}, []string{"provider", "model", "outcome"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "picoclaw_llm_tokens_total", Help: "LLM tokens by provider, model and direction (input, output).",
		}, []string{"provider", "model", "direction"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "picoclaw_llm_call_seconds", Help: "LLM call latency including retries.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"provider", "model"}),
	}
	m.calls = register(reg, m.calls)
	m.tokens = register(reg, m.tokens)
	m.latency = register(reg, m.latency)
	return m
}

func register[T prometheus.Collector](reg prometheus.Registerer, c T) T {
	if err := reg.Register(c); err != nil {
		if are, ok := err.(prometheus.AlreadyRegisteredError); ok {
			if existing, ok := are.ExistingCollector.(T); ok {
				return existing
			}
		}
	}
	return c
}

// Observe records one call; it has the Observer signature.
func (m *Metrics) Observe(_ context.Context, c Call) {
	outcome := "ok"
	if c.Err != nil {
		outcome = Code(c.Err)
	}
	m.calls.WithLabelValues(c.Provider, c.Model, outcome).Inc()
	m.tokens.WithLabelValues(c.Provider, c.Model, "input").Add(float64(c.Usage.InputTokens))
	m.tokens.WithLabelValues(c.Provider, c.Model, "output").Add(float64(c.Usage.OutputTokens))
	m.latency.WithLabelValues(c.Provider, c.Model).Observe(c.Latency.Seconds())
}
