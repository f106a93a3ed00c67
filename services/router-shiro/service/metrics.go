package service

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// metrics are router-shiro's Prometheus series (SPEC §12): decisions, classifier errors, loop
// stops and reroutes, and the worker model's calls, tokens and errors by provider (the same
// series as every service that calls a model, from llm.Metrics).
type metrics struct {
	decisions        *prometheus.CounterVec
	classifierErrors *prometheus.CounterVec
	loopStops        *prometheus.CounterVec
	reroutes         *prometheus.CounterVec
	llm              *llm.Metrics
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
	}
	for _, c := range []prometheus.Collector{m.decisions, m.classifierErrors, m.loopStops, m.reroutes} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	m.llm = llm.NewMetrics(reg)
	return m, nil
}

func (m *metrics) Decision(source, route string) { m.decisions.WithLabelValues(source, route).Inc() }
func (m *metrics) ClassifierError(reason string) { m.classifierErrors.WithLabelValues(reason).Inc() }
func (m *metrics) LoopStop(reason string)        { m.loopStops.WithLabelValues(reason).Inc() }
func (m *metrics) Reroute(from, to string)       { m.reroutes.WithLabelValues(from, to).Inc() }
