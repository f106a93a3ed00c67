package promstats_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/promstats"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// fakeStore keeps jobs in a map; UpdateReading (which Update goes through) applies the status
// fn decides through a transition table.
type fakeStore struct {
	app.Store
	jobs map[string]domain.Job
}

func (f *fakeStore) Create(_ context.Context, id string, drafts []domain.Draft) (domain.Job, error) {
	j := domain.Job{ID: id, Status: domain.StatusPending, RequestedAt: t0}
	if len(drafts) > 1 && drafts[1].Type == domain.EventAutoApproved {
		j.Status, j.DecidedAt = domain.StatusAutoApproved, t0
	}
	f.jobs[id] = j
	return j, nil
}

func (f *fakeStore) UpdateReading(_ context.Context, id, _ string, fn func(domain.Job, app.StreamReader) ([]domain.Draft, error)) (domain.Job, error) {
	j := f.jobs[id]
	drafts, err := fn(j, nil)
	if err != nil {
		return domain.Job{}, err
	}
	next := map[domain.EventType]domain.Status{domain.EventGranted: domain.StatusGranted, domain.EventDenied: domain.StatusDenied,
		domain.EventExpired: domain.StatusExpired, domain.EventAutoApprovalRevoked: domain.StatusPending, domain.EventClaimed: domain.StatusExecuting}
	for _, d := range drafts {
		j.Status = next[d.Type]
		if j.Status != domain.StatusPending && j.Status != domain.StatusExecuting {
			j.DecidedAt = d.At
		}
	}
	f.jobs[id] = j
	return j, nil
}

type fakeGrants struct {
	g   *domain.Grant
	err error
}

func (f fakeGrants) Get(context.Context) (*domain.Grant, error)           { return f.g, f.err }
func (fakeGrants) Set(context.Context, domain.Grant, time.Duration) error { return nil }
func (fakeGrants) Delete(context.Context) (*domain.Grant, error)          { return nil, nil }

type step struct {
	id   string
	auto bool             // Create: auto-approved at request time
	ev   domain.EventType // Update: the event fn returns
	wait time.Duration    // how long after t0 the event happens
	fail bool             // fn refuses the transition
}

func TestSeries(t *testing.T) {
	tests := []struct {
		name      string
		steps     []step
		grants    fakeGrants
		wantShare float64
		wantWaits uint64
		wantGauge string
	}{
		{name: "nothing yet", wantShare: 0, wantGauge: "picoclaw_approval_auto_approve_active 0"},
		{name: "one person, one Auto-Approve", steps: []step{{id: "a"}, {id: "b", auto: true}, {id: "a", ev: domain.EventGranted, wait: 90 * time.Second}},
			wantShare: 0.5, wantWaits: 1, wantGauge: "picoclaw_approval_auto_approve_active 0"},
		{name: "denials and expiries wait but do not count as approvals", steps: []step{{id: "a"}, {id: "b"}, {id: "c", auto: true},
			{id: "a", ev: domain.EventDenied, wait: time.Minute}, {id: "b", ev: domain.EventExpired, wait: 30 * time.Minute}},
			wantShare: 1, wantWaits: 2},
		{name: "revoked auto-approval goes back to a person", steps: []step{{id: "a", auto: true}, {id: "a", ev: domain.EventAutoApprovalRevoked},
			{id: "a", ev: domain.EventGranted, wait: 2 * time.Minute}}, wantShare: 0, wantWaits: 1},
		{name: "a refused transition is not observed", steps: []step{{id: "a"}, {id: "a", ev: domain.EventGranted, fail: true}}, wantShare: 0},
		{name: "claims after approval are not decisions", steps: []step{{id: "a"}, {id: "a", ev: domain.EventGranted, wait: time.Second},
			{id: "a", ev: domain.EventClaimed, wait: time.Minute}}, wantShare: 0, wantWaits: 1},
		{name: "active grant", grants: fakeGrants{g: &domain.Grant{ID: "g1", ExpiresAt: t0.Add(10 * time.Minute)}},
			wantGauge: "picoclaw_approval_auto_approve_remaining_seconds 600"},
		{name: "grant store down", grants: fakeGrants{err: errors.New("redis down")}, wantGauge: "picoclaw_approval_auto_approve_unavailable 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			stats, err := promstats.New(reg, tc.grants, func() time.Time { return t0 })
			if err != nil {
				t.Fatal(err)
			}
			st := stats.Store(&fakeStore{jobs: map[string]domain.Job{}})
			ctx := context.Background()
			for _, s := range tc.steps {
				if s.ev == "" {
					drafts := []domain.Draft{{Type: domain.EventRequested}}
					if s.auto {
						drafts = append(drafts, domain.Draft{Type: domain.EventAutoApproved})
					}
					if _, err := st.Create(ctx, s.id, drafts); err != nil {
						t.Fatal(err)
					}
					continue
				}
				_, err := st.Update(ctx, s.id, func(domain.Job) ([]domain.Draft, error) {
					if s.fail {
						return nil, domain.ErrPermission
					}
					return []domain.Draft{{Type: s.ev, At: t0.Add(s.wait)}}, nil
				})
				if (err != nil) != s.fail {
					t.Fatalf("update %s: %v", s.id, err)
				}
			}
			if got := stats.AutoShare(); got != tc.wantShare {
				t.Errorf("share = %v, want %v", got, tc.wantShare)
			}
			if got := histogramCount(t, reg); got != tc.wantWaits {
				t.Errorf("pending waits observed = %d, want %d", got, tc.wantWaits)
			}
			if tc.wantGauge != "" {
				var sb strings.Builder
				n, err := testutil.GatherAndCount(reg)
				if err != nil || n == 0 {
					t.Fatalf("gather: %d, %v", n, err)
				}
				mfs, _ := reg.Gather()
				for _, mf := range mfs {
					for _, m := range mf.GetMetric() {
						if m.GetGauge() != nil {
							sb.WriteString(mf.GetName() + " " + strconv.FormatFloat(m.GetGauge().GetValue(), 'f', -1, 64) + "\n")
						}
					}
				}
				if !strings.Contains(sb.String(), tc.wantGauge+"\n") {
					t.Errorf("gauges lack %q:\n%s", tc.wantGauge, sb.String())
				}
			}
		})
	}
}

func histogramCount(t *testing.T, reg *prometheus.Registry) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "picoclaw_approval_pending_wait_seconds" {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	t.Fatal("picoclaw_approval_pending_wait_seconds not registered")
	return 0
}
