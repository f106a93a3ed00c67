package channel

import "github.com/prometheus/client_golang/prometheus"

// SendMetrics counts what became of the channel's sends: an answer sent at once (path
// "direct") or a send from the outbox (path "outbox"); outcome "sent", "queued" (a direct send
// that failed and went to the outbox), "retried" (an outbox send that failed and is tried
// again) or "refused" (the channel refused it: dead-lettered). The outbox's own entry metrics
// (picoclaw_inbox_entries_total) count only what went through the outbox.
type SendMetrics struct {
	sends *prometheus.CounterVec
}

// NewSendMetrics registers the send metrics on reg.
func NewSendMetrics(reg prometheus.Registerer) (*SendMetrics, error) {
	m := &SendMetrics{sends: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "picoclaw_channel_sends_total",
		Help: "Sends to the channel's API, by channel, path (direct: an answer sent at once; outbox) and outcome (sent, queued: a direct send that failed and was stored in the outbox, retried, refused: dead-lettered).",
	}, []string{"channel", "path", "outcome"})}
	if err := reg.Register(m.sends); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *SendMetrics) count(channel, path, outcome string) {
	if m != nil {
		m.sends.WithLabelValues(channel, path, outcome).Inc()
	}
}
