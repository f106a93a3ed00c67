package app

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
)

// memStore is an in-memory Store for use-case tests.
type memStore struct {
	mu     sync.Mutex
	agents map[string]domain.Agent
	err    error
}

func newMemStore() *memStore { return &memStore{agents: map[string]domain.Agent{}} }

func (m *memStore) Update(_ context.Context, id string, fn func(*domain.Agent) *domain.Agent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	var cur *domain.Agent
	if a, ok := m.agents[id]; ok {
		cur = &a
	}
	if next := fn(cur); next != nil {
		m.agents[id] = *next
	}
	return nil
}

func (m *memStore) List(context.Context) ([]domain.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	var out []domain.Agent
	for _, a := range m.agents {
		out = append(out, a)
	}
	return out, nil
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type notifier struct {
	mu     sync.Mutex
	alerts []Alert
	failN  int
}

func (n *notifier) Notify(_ context.Context, a Alert) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.failN > 0 {
		n.failN--
		return errors.New("gateway unavailable")
	}
	n.alerts = append(n.alerts, a)
	return nil
}

func (n *notifier) sent() []Alert {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Alert(nil), n.alerts...)
}

func beat(id string, s domain.State, jobs ...string) domain.Beat {
	return domain.Beat{AgentID: id, Alias: id, Kind: "service", Service: id, Status: s, JobIDs: jobs, MemoryMB: 10}
}

func TestBeatSweepAlertOncePerIncident(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	n := &notifier{}
	al := NewAlerter(AlertConfig{Locale: LocaleEn, Timeout: time.Minute, Env: Env{Now: c.now}}, n)
	st := newMemStore()
	svc := New(Config{Timeout: time.Minute, SweepEvery: time.Second, Env: Env{Now: c.now}}, st, NewBroker(), al)
	changes, cancel := svc.Watch()
	defer cancel()

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(svc.Beat(ctx, beat("executor", domain.StateIdle)))
	must(svc.Beat(ctx, beat("approval", domain.StateIdle)))
	for range 3 {
		c.advance(30 * time.Second)
		must(svc.Beat(ctx, beat("approval", domain.StateIdle)))
		must(svc.Sweep(ctx))
	}
	// executor silent for 90 s: timeout once, however often the sweep runs.
	must(svc.Sweep(ctx))
	rep, err := svc.Report(ctx, LocaleEn)
	must(err)
	states := map[string]domain.State{}
	for _, a := range rep.Agents {
		states[a.Last.AgentID] = a.State
	}
	if states["executor"] != domain.StateTimeout || states["approval"] != domain.StateIdle {
		t.Fatalf("states = %v", states)
	}
	must(svc.Beat(ctx, beat("executor", domain.StateIdle)))
	must(svc.Beat(ctx, beat("executor", domain.StateIdle)))

	// Deliver what was queued.
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = al.Run(runCtx) }()
	deadline := time.Now().Add(5 * time.Second)
	for len(n.sent()) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	<-done
	sent := n.sent()
	if len(sent) != 2 {
		t.Fatalf("alerts = %+v, want exactly one incident and one recovery", sent)
	}
	if sent[0].Kind != domain.AlertIncident || !strings.Contains(sent[0].Text, "executor is not responding") {
		t.Errorf("first alert = %+v", sent[0])
	}
	if sent[1].Kind != domain.AlertRecovery || !strings.Contains(sent[1].Text, "Recovered: executor") {
		t.Errorf("second alert = %+v", sent[1])
	}
	if sent[0].RetryKey == sent[1].RetryKey || sent[0].RetryKey == "" {
		t.Errorf("retry keys %q and %q must differ", sent[0].RetryKey, sent[1].RetryKey)
	}

	// Watch saw: two new agents, the timeout, the recovery.
	var got []string
	for len(changes) > 0 {
		ch := <-changes
		got = append(got, ch.Agent.Last.AgentID+":"+string(ch.Previous)+">"+string(ch.Agent.State))
	}
	want := []string{"executor:>idle", "approval:>idle", "executor:idle>timeout", "executor:timeout>idle"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("watched %v, want %v", got, want)
	}
}

func TestAlertRetriesWithSameKey(t *testing.T) {
	n := &notifier{failN: 2}
	al := NewAlerter(AlertConfig{Backoff: time.Millisecond}, n)
	a, _ := domain.Receive(nil, beat("order3", domain.StateError), time.Now())
	al.Enqueue(context.Background(), domain.Change{Agent: a, IncidentSince: a.StateSince})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = al.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for len(n.sent()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if got := n.sent(); len(got) != 1 {
		t.Fatalf("delivered %d alerts, want 1 after two failures", len(got))
	}
}

func TestReportShowsOverdueAsTimeoutAndBusyJobs(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	svc := New(Config{Timeout: time.Minute, Env: Env{Now: c.now}}, newMemStore(), NewBroker(), nil)
	if err := svc.Beat(ctx, beat("coder-order", domain.StateBusy, "job_20260101_007", "job_20260101_008")); err != nil {
		t.Fatal(err)
	}
	if err := svc.Beat(ctx, beat("gateway-line", domain.StateIdle)); err != nil {
		t.Fatal(err)
	}
	c.advance(45 * time.Second)
	if err := svc.Beat(ctx, beat("coder-order", domain.StateBusy, "job_20260101_007", "job_20260101_008")); err != nil {
		t.Fatal(err)
	}
	c.advance(20 * time.Second)
	rep, err := svc.Report(ctx, LocaleJa)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Agents) != 2 || rep.Agents[0].Last.AgentID != "gateway-line" || rep.Agents[0].State != domain.StateTimeout {
		t.Fatalf("agents = %+v", rep.Agents)
	}
	if rep.Agents[1].State != domain.StateBusy || rep.Agents[1].Last.CurrentJobID() != "job_20260101_007" {
		t.Fatalf("coder-order = %+v", rep.Agents[1])
	}
	if !strings.Contains(rep.Text, "coder-order: 処理中 | 最終確認 20秒前 | ジョブ job_20260101_007 +1") {
		t.Fatalf("text:\n%s", rep.Text)
	}
}

func TestBeatErrors(t *testing.T) {
	st := newMemStore()
	svc := New(Config{Timeout: time.Minute}, st, NewBroker(), nil)
	if err := svc.Beat(context.Background(), beat("", domain.StateIdle)); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("Beat without id = %v, want ErrInvalid", err)
	}
	st.err = errors.New("connection refused")
	if err := svc.Beat(context.Background(), beat("x", domain.StateIdle)); err == nil || errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("Beat with a broken store = %v", err)
	}
}

func TestBrokerDropsSlowWatcher(t *testing.T) {
	b := NewBroker()
	ch, cancel := b.Subscribe()
	defer cancel()
	for range subscriberBuffer + 1 {
		b.Publish(domain.Change{})
	}
	n := 0
	for range ch {
		n++
	}
	if n != subscriberBuffer {
		t.Fatalf("received %d changes before the channel closed, want %d", n, subscriberBuffer)
	}
}
