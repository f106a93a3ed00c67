package app

import (
	"context"
	"errors"
	"fmt"
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

func (m *memStore) Delete(_ context.Context, key string) (*domain.Agent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	a, ok := m.agents[key]
	if !ok {
		return nil, nil
	}
	delete(m.agents, key)
	return &a, nil
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
	a, _ := domain.Receive(nil, beat("order3", domain.StateError), time.Now(), domain.Hysteresis{})
	al.Enqueue(context.Background(), domain.Change{Agent: a, IncidentSince: a.StateSince, Kind: domain.AlertIncident})
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

func replicaBeat(id, replica string, s domain.State, errMsg string) domain.Beat {
	b := beat(id, s)
	b.Replica, b.ErrorMessage = replica, errMsg
	return b
}

// Two replicas of one service are two entries: one sick replica, beating error every 500 ms for
// 30 s next to a healthy one, makes one alert (the hysteresis opens the incident after three
// errors in a row), and a replica that dies is seen as timed out while the other lives on.
func TestReplicasAreTrackedAndAlertedOneByOne(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	n := &notifier{}
	al := NewAlerter(AlertConfig{Locale: LocaleEn, Timeout: time.Minute, Env: Env{Now: c.now}}, n)
	st := newMemStore()
	svc := New(Config{Timeout: time.Minute, Hysteresis: domain.Hysteresis{Open: 3, Close: 2}, Env: Env{Now: c.now}}, st, NewBroker(), al)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for range 60 {
		must(svc.Beat(ctx, replicaBeat("chat-mio", "pod-a", domain.StateIdle, "")))
		must(svc.Beat(ctx, replicaBeat("chat-mio", "pod-b", domain.StateError, "router-shiro unreachable")))
		c.advance(500 * time.Millisecond)
		must(svc.Sweep(ctx))
	}
	if got := len(al.q); got != 1 {
		t.Fatalf("%d alerts queued for one sick replica, want 1", got)
	}
	first := <-al.q
	if first.Kind != domain.AlertIncident || first.AgentID != "chat-mio@pod-b" || !strings.Contains(first.Text, "chat-mio@pod-b reported an error") {
		t.Fatalf("alert = %+v", first)
	}
	// pod-a dies; pod-b heals.
	for range 4 {
		c.advance(30 * time.Second)
		must(svc.Beat(ctx, replicaBeat("chat-mio", "pod-b", domain.StateIdle, "")))
		must(svc.Sweep(ctx))
	}
	rep, err := svc.Report(ctx, LocaleEn)
	must(err)
	states := map[string]domain.State{}
	for _, a := range rep.Agents {
		states[a.Last.Key()] = a.State
	}
	if states["chat-mio@pod-a"] != domain.StateTimeout || states["chat-mio@pod-b"] != domain.StateIdle || len(states) != 2 {
		t.Fatalf("states = %v", states)
	}
	if !strings.Contains(rep.Text, "chat-mio@pod-a: timeout") {
		t.Fatalf("report does not show the dead replica:\n%s", rep.Text)
	}
	var kinds []string
	for len(al.q) > 0 {
		a := <-al.q
		kinds = append(kinds, fmt.Sprint(a.AgentID, ":", a.Kind))
	}
	if want := []string{"chat-mio@pod-b:2", "chat-mio@pod-a:1"}; fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("alerts = %v, want pod-b's recovery and pod-a's timeout", kinds)
	}
}

// A replica that stops on purpose while another runs on is forgotten (its open incident ends
// with one message); the last one stays and times out, since the service is then down, until
// a new replica takes its place. An agent that now names its replica replaces its unnamed entry.
func TestLeavingAndReplacedReplicas(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	n := &notifier{}
	al := NewAlerter(AlertConfig{Locale: LocaleJa, Timeout: time.Minute, Env: Env{Now: c.now}}, n)
	st := newMemStore()
	svc := New(Config{Timeout: time.Minute, Env: Env{Now: c.now}}, st, NewBroker(), al)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	leave := func(r string) {
		t.Helper()
		b := replicaBeat("executor", r, domain.StateIdle, "")
		b.Leaving = true
		must(svc.Beat(ctx, b))
	}
	next := func() Alert {
		t.Helper()
		if len(al.q) == 0 {
			t.Fatal("no alert")
		}
		return <-al.q
	}
	must(svc.Beat(ctx, beat("executor", domain.StateIdle))) // an older sender: no replica
	must(svc.Beat(ctx, replicaBeat("executor", "pod-a", domain.StateIdle, "")))
	must(svc.Beat(ctx, replicaBeat("executor", "pod-b", domain.StateError, "disk full")))
	if _, ok := st.agents["executor"]; ok {
		t.Fatal("the unnamed entry was kept next to the replicas")
	}
	if a := next(); a.Kind != domain.AlertIncident || a.AgentID != "executor@pod-b" {
		t.Fatalf("alert = %+v", a)
	}
	leave("pod-b")
	if a := next(); a.Kind != domain.AlertLeft || !strings.Contains(a.Text, "executor@pod-b は計画的に停止しました") {
		t.Fatalf("alert = %+v", a)
	}
	if _, ok := st.agents["executor@pod-b"]; ok {
		t.Fatal("a replica that left while another runs on was kept")
	}
	leave("pod-a") // the last one: the executor is down now
	c.advance(2 * time.Minute)
	must(svc.Sweep(ctx))
	// One replica left: the texts speak of the executor.
	if a := next(); a.Kind != domain.AlertIncident || !strings.Contains(a.Text, "⚠️ 異常: executor から応答がありません") {
		t.Fatalf("alert = %+v", a)
	}
	must(svc.Beat(ctx, replicaBeat("executor", "pod-c", domain.StateIdle, "")))
	if a := next(); a.Kind != domain.AlertReplaced || !strings.HasPrefix(a.Text, "✅ 復旧: executor が正常に戻りました") {
		t.Fatalf("alert = %+v", a)
	}
	if len(st.agents) != 1 || len(al.q) != 0 {
		t.Fatalf("agents %v, %d more alerts", st.agents, len(al.q))
	}
}

// A replica restarted under a new id without saying goodbye (a crash, a killed pod) is replaced
// by the new one when it would time out: nothing is down, nobody is alerted. A replica that dies
// next to an older one that keeps running does time out, and says which replica it is.
func TestCrashedReplicaReplacedByANewOneIsNoIncident(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	al := NewAlerter(AlertConfig{Locale: LocaleEn, Timeout: time.Minute, Env: Env{Now: c.now}}, &notifier{})
	st := newMemStore()
	svc := New(Config{Timeout: time.Minute, Env: Env{Now: c.now}}, st, NewBroker(), al)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(svc.Beat(ctx, replicaBeat("router-shiro", "old", domain.StateIdle, "")))
	must(svc.Beat(ctx, replicaBeat("approval", "a", domain.StateIdle, "")))
	must(svc.Beat(ctx, replicaBeat("approval", "b", domain.StateIdle, "")))
	c.advance(10 * time.Second)
	// router-shiro crashes and comes back as "new"; approval b dies, a runs on.
	for range 4 {
		c.advance(20 * time.Second)
		must(svc.Beat(ctx, replicaBeat("router-shiro", "new", domain.StateIdle, "")))
		must(svc.Beat(ctx, replicaBeat("approval", "a", domain.StateIdle, "")))
		must(svc.Sweep(ctx))
	}
	if _, ok := st.agents["router-shiro@old"]; ok {
		t.Fatal("the replaced replica is still there")
	}
	if len(al.q) != 1 {
		t.Fatalf("%d alerts, want 1 (approval b)", len(al.q))
	}
	if a := <-al.q; a.AgentID != "approval@b" || a.Text != "⚠️ Alert: approval@b is not responding (last seen 09:00:00, no heartbeat for over 1m)." {
		t.Fatalf("alert = %+v", a)
	}
	rep, err := svc.Report(ctx, LocaleEn)
	must(err)
	for _, want := range []string{"- router-shiro: idle", "- approval@a: idle", "- approval@b: timeout"} {
		if !strings.Contains(rep.Text, want) {
			t.Errorf("report lacks %q:\n%s", want, rep.Text)
		}
	}
}
