// Package promstats adds the approval series that need the store or the grant store (SPEC §12):
// how long jobs wait in pending, the share of approvals Auto-Approve gave, and the state of the
// grant. Request and result counters live with the use cases.
package promstats

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// scrapeTimeout bounds the grant read of one scrape.
const scrapeTimeout = 2 * time.Second

// Stats observes committed job transitions through Store and reads the grant when scraped.
type Stats struct {
	wait    prometheus.Histogram
	auto    atomic.Int64
	granted atomic.Int64
	grants  app.GrantStore
	now     func() time.Time

	share, active, remaining, grantErr *prometheus.Desc
}

// New registers the series on reg.
func New(reg prometheus.Registerer, grants app.GrantStore, now func() time.Time) (*Stats, error) {
	if now == nil {
		now = time.Now
	}
	s := &Stats{
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "picoclaw_approval_pending_wait_seconds",
			Help:    "How long a job waited in pending before it was granted, denied, expired or cancelled.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600},
		}),
		grants: grants, now: now,
		share: prometheus.NewDesc("picoclaw_approval_auto_approve_share",
			"Share of approvals given by Auto-Approve since start: auto_approved / (auto_approved + granted by a person); 0 before the first approval.", nil, nil),
		active:    prometheus.NewDesc("picoclaw_approval_auto_approve_active", "1 while an Auto-Approve grant is in force.", nil, nil),
		remaining: prometheus.NewDesc("picoclaw_approval_auto_approve_remaining_seconds", "Seconds until the Auto-Approve grant expires (0 when off).", nil, nil),
		grantErr:  prometheus.NewDesc("picoclaw_approval_auto_approve_unavailable", "1 when the grant store could not be read at the last scrape.", nil, nil),
	}
	for _, c := range []prometheus.Collector{s.wait, (*collector)(s)} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Store wraps st so committed transitions are observed.
func (s *Stats) Store(st app.Store) app.Store { return &store{Store: st, s: s} }

type store struct {
	app.Store
	s *Stats
}

func (w *store) Create(ctx context.Context, id string, drafts []domain.Draft) (domain.Job, error) {
	j, err := w.Store.Create(ctx, id, drafts)
	if err == nil && j.Status == domain.StatusAutoApproved {
		w.s.auto.Add(1)
	}
	return j, err
}

// Update observes a job leaving pending once its transaction committed.
func (w *store) Update(ctx context.Context, id string, fn func(domain.Job) ([]domain.Draft, error)) (domain.Job, error) {
	return w.UpdateReading(ctx, id, "", func(cur domain.Job, _ app.StreamReader) ([]domain.Draft, error) { return fn(cur) })
}

// UpdateReading observes like Update.
func (w *store) UpdateReading(ctx context.Context, id, stream string, fn func(domain.Job, app.StreamReader) ([]domain.Draft, error)) (domain.Job, error) {
	var before domain.Status
	j, err := w.Store.UpdateReading(ctx, id, stream, func(cur domain.Job, r app.StreamReader) ([]domain.Draft, error) {
		before = cur.Status
		return fn(cur, r)
	})
	if err != nil {
		return j, err
	}
	if before == domain.StatusAutoApproved && j.Status == domain.StatusPending {
		// Switching Auto-Approve off sends unclaimed auto-approved jobs back to a person.
		w.s.auto.Add(-1)
	}
	if before != domain.StatusPending || j.Status == domain.StatusPending {
		return j, nil
	}
	if j.Status == domain.StatusGranted {
		w.s.granted.Add(1)
	}
	// Every way out of pending records its time as DecidedAt.
	if !j.RequestedAt.IsZero() && !j.DecidedAt.IsZero() {
		if d := j.DecidedAt.Sub(j.RequestedAt); d >= 0 {
			w.s.wait.Observe(d.Seconds())
		}
	}
	return j, err
}

// AutoShare is auto_approved / (auto_approved + granted) since start.
func (s *Stats) AutoShare() float64 {
	auto, granted := float64(s.auto.Load()), float64(s.granted.Load())
	if auto+granted == 0 {
		return 0
	}
	return auto / (auto + granted)
}

// collector reads the grant at scrape time, so the gauges hold across restarts and replicas.
type collector Stats

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.share
	ch <- c.active
	ch <- c.remaining
	ch <- c.grantErr
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	now := c.now()
	active, remaining, unavailable := 0.0, 0.0, 0.0
	if g, err := c.grants.Get(ctx); err != nil {
		unavailable = 1
	} else if g.ActiveAt(now) {
		active, remaining = 1, g.ExpiresAt.Sub(now).Seconds()
	}
	gauge(ch, c.share, (*Stats)(c).AutoShare())
	gauge(ch, c.active, active)
	gauge(ch, c.remaining, remaining)
	gauge(ch, c.grantErr, unavailable)
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64) {
	if m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v); err == nil {
		ch <- m
	}
}
