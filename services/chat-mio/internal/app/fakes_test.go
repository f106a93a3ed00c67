package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// The fakes below record calls and return scripted answers; they hold none of the peers' rules.

type memStore struct {
	mu      sync.Mutex
	pending map[string][]string
	blobs   map[string][]byte
	// loads are the event ids LoadTurn was asked for, and records the RecordTurn calls, in
	// order.
	loads   []string
	records []app.TurnRecord
	// down makes LoadTurn and RecordTurn fail as a store that cannot be reached.
	down bool
}

func newMemStore() *memStore {
	return &memStore{pending: map[string][]string{}, blobs: map[string][]byte{}}
}

func (m *memStore) Load(_ context.Context, id, _ string, _ int) (domain.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return domain.Session{ID: id, Pending: slices.Clone(m.pending[id])}, nil
}
func (m *memStore) LoadTurn(ctx context.Context, id, day string, n int, event string) (domain.Session, []byte, error) {
	m.mu.Lock()
	m.loads = append(m.loads, event)
	down, reply := m.down, m.blobs["r:"+event]
	m.mu.Unlock()
	if down {
		return domain.Session{}, nil, fmt.Errorf("session store load: %w", domain.ErrUnavailable)
	}
	s, err := m.Load(ctx, id, day, n)
	return s, reply, err
}
func (m *memStore) RecordTurn(_ context.Context, _ string, rec app.TurnRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records = append(m.records, rec)
	if m.down {
		return fmt.Errorf("session store record turn: %w", domain.ErrUnavailable)
	}
	if rec.EventID != "" {
		m.blobs["r:"+rec.EventID] = rec.Reply
	}
	return nil
}
func (m *memStore) SetLocalOnly(context.Context, string, bool) error   { return nil }
func (m *memStore) SetPrevRoute(context.Context, string, string) error { return nil }
func (m *memStore) AddPending(_ context.Context, id, job string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending[id] = append(m.pending[id], job)
	return nil
}
func (m *memStore) RemovePending(_ context.Context, id, job string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending[id] = slices.DeleteFunc(m.pending[id], func(s string) bool { return s == job })
	return nil
}
func (m *memStore) ActiveSessions(context.Context, string) ([]string, error) { return nil, nil }
func (m *memStore) SaveNote(context.Context, string, string, string) (bool, error) {
	return false, nil
}
func (m *memStore) Forget(context.Context, string, ...string) error { return nil }
func (m *memStore) AppendTurns(context.Context, string, string, int, ...domain.Turn) error {
	return nil
}
func (m *memStore) SaveOptions(_ context.Context, k string, b []byte, _ time.Duration) error {
	return m.save("o:"+k, b)
}
func (m *memStore) LoadOptions(_ context.Context, k string) ([]byte, error) { return m.load("o:" + k) }

// LoadReply is the reply kept for an event, or domain.ErrNotFound.
func (m *memStore) LoadReply(_ context.Context, k string) ([]byte, error) { return m.load("r:" + k) }

// loaded is a copy of the event ids LoadTurn was asked for so far.
func (m *memStore) loaded() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.loads)
}

// recorded is a copy of the RecordTurn calls so far.
func (m *memStore) recorded() []app.TurnRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.records)
}
func (m *memStore) save(k string, b []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blobs[k] = b
	return nil
}
func (m *memStore) load(k string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b, ok := m.blobs[k]; ok {
		return b, nil
	}
	return nil, domain.ErrNotFound
}

type seqIDs struct{ n int }

func (s *seqIDs) Next(context.Context) (string, error) {
	s.n++
	return fmt.Sprintf("job_20260101_%03d", s.n), nil
}

type fakeRouter struct {
	res app.RouteResult
	err error
}

func (f *fakeRouter) Route(context.Context, app.RouteRequest) (app.RouteResult, error) {
	return f.res, f.err
}

// fakeApprovals answers every call with the scripted result or error.
type fakeApprovals struct {
	mu       sync.Mutex
	calls    []string
	inputs   []app.ProposalInput
	request  app.ApprovalRequest
	decided  app.ApprovalJob
	job      app.ApprovalJob
	err      error // of Request, Approve, Deny and the Auto-Approve calls
	jobErr   error
	autoText string
}

func (f *fakeApprovals) note(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

func (f *fakeApprovals) Request(_ context.Context, in app.ProposalInput) (app.ApprovalRequest, error) {
	f.note("Request")
	f.mu.Lock()
	f.inputs = append(f.inputs, in)
	f.mu.Unlock()
	return f.request, f.err
}
func (f *fakeApprovals) Approve(context.Context, string, app.Actor, domain.Locale) (app.ApprovalJob, error) {
	f.note("Approve")
	return f.decided, f.err
}
func (f *fakeApprovals) ApproveSimilar(_ context.Context, _ string, _ app.Actor, ttl time.Duration, _ domain.Locale) (app.ApprovalJob, string, error) {
	f.note("ApproveSimilar " + ttl.String())
	return f.decided, f.autoText, f.err
}
func (f *fakeApprovals) Deny(context.Context, string, app.Actor, string, domain.Locale) (app.ApprovalJob, error) {
	f.note("Deny")
	return f.decided, f.err
}
func (f *fakeApprovals) Job(context.Context, string) (app.ApprovalJob, error) {
	f.note("Job")
	return f.job, f.jobErr
}
func (f *fakeApprovals) SetAutoApprove(context.Context, app.AutoApproveInput) (string, error) {
	f.note("SetAutoApprove")
	return f.autoText, f.err
}
func (f *fakeApprovals) DisableAutoApprove(context.Context, app.Actor, domain.Locale) (string, error) {
	f.note("DisableAutoApprove")
	return f.autoText, f.err
}
func (f *fakeApprovals) AutoApproveStatus(context.Context, domain.Locale) (app.AutoApproveStatus, error) {
	f.note("AutoApproveStatus")
	return app.AutoApproveStatus{Text: f.autoText}, f.err
}

type fakeExecutor struct {
	mu   sync.Mutex
	jobs []string
	res  app.Execution
	err  error
	// stale, when set, is the dry run's complaint: the proposal does not apply.
	stale    string
	checkErr error
	checks   int
	// gate, when set, holds every execution until it is closed.
	gate chan struct{}
}

func (f *fakeExecutor) Check(context.Context, app.Proposal, domain.Locale) (app.Check, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checks++
	return app.Check{Applies: f.stale == "", Text: f.stale}, f.checkErr
}

func (f *fakeExecutor) Execute(_ context.Context, id string, _ domain.Locale) (app.Execution, error) {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.jobs = append(f.jobs, id)
	return f.res, f.err
}

func (f *fakeExecutor) executed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.jobs)
}

type fakeHeartbeat struct{}

func (fakeHeartbeat) Report(context.Context, domain.Locale) (string, error) { return "all idle", nil }

type fakeNotifier struct {
	mu     sync.Mutex
	pushed []app.Notification
}

func (f *fakeNotifier) Push(_ context.Context, n app.Notification) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pushed = append(f.pushed, n)
	return nil
}

// unit is the App over fakes only: no I/O.
type unit struct {
	app       *app.App
	router    *fakeRouter
	approvals *fakeApprovals
	executor  *fakeExecutor
	notifier  *fakeNotifier
	store     *memStore
	model     *fakeModel
}

// codeRoute is a router answer with one proposal from order2.
func codeRoute() app.RouteResult {
	return app.RouteResult{Decision: app.Decision{Route: "CODE", Source: "COMMAND"}, FinalRoute: "CODE",
		Proposals: []app.ProposalOption{{Order: "order2", Proposal: &app.Proposal{Order: "order2", Plan: "write the guide", Content: []byte("wire")}}}}
}

func newUnit(t *testing.T) *unit {
	t.Helper()
	return newUnitWith(t, nil)
}

// newUnitWith is newUnit with the configuration changed by configure (when set).
func newUnitWith(t *testing.T, configure func(*app.Config)) *unit {
	t.Helper()
	u := &unit{router: &fakeRouter{res: codeRoute()}, approvals: &fakeApprovals{}, executor: &fakeExecutor{}, notifier: &fakeNotifier{}, store: newMemStore(),
		model: &fakeModel{reply: "hi"}}
	cfg := app.Config{ReplyBudget: 5 * time.Second}
	if configure != nil {
		configure(&cfg)
	}
	a, err := app.New(cfg, u.store, &seqIDs{},
		app.Peers{Router: u.router, Approvals: u.approvals, Executor: u.executor, Heartbeat: fakeHeartbeat{}},
		u.model, u.notifier, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	u.app = a
	return u
}

func (u *unit) send(t *testing.T, textIn, locale string) *chatv1.HandleMessageResponse {
	t.Helper()
	res, err := u.app.HandleMessage(context.Background(), &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: textIn, Locale: locale})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
