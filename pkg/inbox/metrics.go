package inbox

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts what the inbox does, per stream: events stored and deduplicated at the webhook,
// entries acknowledged, retried, reclaimed and buried by the consumer, how long an entry waited
// in the stream before a consumer took it up, and (read from the engine at scrape time) the
// stream lag of every consumer group started with these metrics.
type Metrics struct {
	events  *prometheus.CounterVec
	entries *prometheus.CounterVec
	wait    *prometheus.HistogramVec
	streams *streamCollector
}

// NewMetrics registers the inbox metrics on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "picoclaw_inbox_events_total", Help: "Inbound events offered to the inbox, by stream and outcome (stored, duplicate, replayed from the dead letters).",
		}, []string{"stream", "outcome"}),
		entries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "picoclaw_inbox_entries_total", Help: "Stream entries handled by consumers, by stream and outcome (acked, retried, reclaimed, dead, ack_retried or bury_retried for a failed last step tried again, waited_turn: waited for an earlier entry of its chat at another consumer, taken_over: handled by another consumer instead).",
		}, []string{"stream", "outcome"}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "picoclaw_inbox_wait_seconds", Help: "Time from an entry's append to a consumer taking it up, by stream.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18),
		}, []string{"stream"}),
		streams: &streamCollector{
			lag: prometheus.NewDesc("picoclaw_inbox_stream_lag_entries",
				"Entries of the stream not yet delivered to the consumer group.", []string{"stream", "group"}, nil),
			pending: prometheus.NewDesc("picoclaw_inbox_stream_pending_entries",
				"Entries delivered to the consumer group but not yet acknowledged.", []string{"stream", "group"}, nil),
			length: prometheus.NewDesc("picoclaw_inbox_stream_length_entries",
				"Entries held in the stream.", []string{"stream"}, nil),
		},
	}
	for _, c := range []prometheus.Collector{m.events, m.entries, m.wait, m.streams} {
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

// waited records how long the entry id sat in the stream; ids are "<ms>-<seq>".
func (m *Metrics) waited(stream, id string, now time.Time) {
	if m == nil {
		return
	}
	ms, _ := splitID(id)
	if ms == 0 {
		return
	}
	m.wait.WithLabelValues(stream).Observe(max(0, now.Sub(time.UnixMilli(int64(ms))).Seconds()))
}

// watch makes the scrape report the lag of group on stream.
func (m *Metrics) watch(q queue, stream, group string) {
	if m == nil {
		return
	}
	m.streams.add(watched{q: q, stream: stream, group: group})
}

type watched struct {
	q             queue
	stream, group string
}

// streamCollector reads the consumer groups' state from the engine at scrape time, so the numbers
// are current even when no consumer is making progress.
type streamCollector struct {
	lag, pending, length *prometheus.Desc

	mu      sync.Mutex
	watched []watched
}

func (c *streamCollector) add(w watched) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, x := range c.watched {
		if x.stream == w.stream && x.group == w.group {
			return
		}
	}
	c.watched = append(c.watched, w)
}

func (c *streamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lag
	ch <- c.pending
	ch <- c.length
}

func (c *streamCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	ws := append([]watched(nil), c.watched...)
	c.mu.Unlock()
	for _, w := range ws {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		st, err := w.q.stats(ctx)
		cancel()
		if err != nil {
			continue
		}
		gauge(ch, c.length, float64(st.Length), w.stream)
		if !st.Group {
			continue
		}
		// Lag is -1 when Redis cannot tell (entries deleted in the middle); no sample then.
		if st.Lag >= 0 {
			gauge(ch, c.lag, float64(st.Lag), w.stream, w.group)
		}
		gauge(ch, c.pending, float64(st.Pending), w.stream, w.group)
	}
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	if m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, labels...); err == nil {
		ch <- m
	}
}
