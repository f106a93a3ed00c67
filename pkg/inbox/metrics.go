package inbox

import "github.com/prometheus/client_golang/prometheus"

// Metrics counts what the inbox does, per stream: events stored and deduplicated at the webhook,
// and entries acknowledged, retried, reclaimed and buried by the consumer.
type Metrics struct {
	events  *prometheus.CounterVec
	entries *prometheus.CounterVec
}

// NewMetrics registers the inbox metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "picoclaw_inbox_events_total", Help: "Inbound events offered to the inbox, by stream and outcome (stored, duplicate).",
		}, []string{"stream", "outcome"}),
		entries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "picoclaw_inbox_entries_total", Help: "Stream entries handled by consumers, by stream and outcome (acked, retried, reclaimed, dead).",
		}, []string{"stream", "outcome"}),
	}
	for _, c := range []prometheus.Collector{m.events, m.entries} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) event(stream, outcome string, n int) {
	if m != nil && n > 0 {
		m.events.WithLabelValues(stream, outcome).Add(float64(n))
	}
}

func (m *Metrics) entry(stream, outcome string) {
	if m != nil {
		m.entries.WithLabelValues(stream, outcome).Inc()
	}
}
