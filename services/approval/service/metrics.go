package service

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// metrics exports approvals by outcome; the auto-approve share is
// picoclaw_approval_requests_total{outcome="auto_approved"} over the sum.
type metrics struct {
	requests *prometheus.CounterVec
	results  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, st app.Store, now func() time.Time) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "picoclaw_approval_requests_total",
			Help: "Approval requests by policy outcome."}, []string{"outcome"}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "picoclaw_approval_results_total",
			Help: "Decisions, claims and refusals by kind."}, []string{"kind"}),
	}
	pending := &pendingCollector{st: st, now: now,
		count: prometheus.NewDesc("picoclaw_approval_pending_jobs", "Jobs waiting for a decision.", nil, nil),
		age:   prometheus.NewDesc("picoclaw_approval_oldest_pending_age_seconds", "Age of the oldest pending job.", nil, nil)}
	for _, c := range []prometheus.Collector{m.requests, m.results, pending} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) Request(o domain.Outcome) { m.requests.WithLabelValues(string(o)).Inc() }
func (m *metrics) Result(kind string)       { m.results.WithLabelValues(kind).Inc() }

// pendingCollector reads the pending jobs from the read model at scrape time.
type pendingCollector struct {
	st         app.Store
	now        func() time.Time
	count, age *prometheus.Desc
}

func (c *pendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.count; ch <- c.age }

func (c *pendingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	jobs, err := c.st.List(ctx, app.ListFilter{Statuses: []domain.Status{domain.StatusPending}, Limit: 10000})
	if err != nil {
		return
	}
	oldest := 0.0
	for _, j := range jobs {
		if a := c.now().Sub(j.RequestedAt).Seconds(); a > oldest {
			oldest = a
		}
	}
	if m, err := prometheus.NewConstMetric(c.count, prometheus.GaugeValue, float64(len(jobs))); err == nil {
		ch <- m
	}
	if m, err := prometheus.NewConstMetric(c.age, prometheus.GaugeValue, oldest); err == nil {
		ch <- m
	}
}
