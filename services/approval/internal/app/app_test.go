package app_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

var testKeys = func() *domain.Keyring {
	k, err := domain.NewKeyring([]byte("app-test-audit-key-0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	return k
}()

// memStore is an in-memory event store: enough to test the use cases without I/O.
type memStore struct {
	mu      sync.Mutex
	events  map[string][]domain.Event
	notices map[string]*memNotice
	// beforeTx, when set, runs as a transaction of Update begins, before anything is read.
	beforeTx func()
	// inTx, when set, runs once a transaction of Update holds the store, before its fn.
	inTx func()
	// beforeEvents, when set, runs as Events begins, before it waits for the store.
	beforeEvents func()
	// lastEvent, when set, changes what LastEvent returns (a row swapped in for that read).
	lastEvent func(*domain.Event)
}

// memNotice is a requester notice and its delivery state.
type memNotice struct {
	domain.Notice
	next    time.Time
	done    bool
	outcome string
}

func newMemStore() *memStore {
	return &memStore{events: map[string][]domain.Event{}, notices: map[string]*memNotice{}}
}

func (m *memStore) seal(stream string, drafts []domain.Draft) error {
	evs := m.events[stream]
	seq, prev := int64(0), ""
	if n := len(evs); n > 0 {
		seq, prev = evs[n-1].Seq, evs[n-1].Hash
	}
	for _, d := range drafts {
		e, err := testKeys.Seal(stream, seq, prev, d)
		if err != nil {
			return err
		}
		evs = append(evs, e)
		seq, prev = e.Seq, e.Hash
	}
	m.events[stream] = evs
	return nil
}

func (m *memStore) Create(_ context.Context, id string, drafts []domain.Draft) (domain.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.events[id]) > 0 {
		return domain.Job{}, domain.ErrConflict
	}
	if err := m.seal(id, drafts); err != nil {
		return domain.Job{}, err
	}
	return domain.Rebuild(m.events[id])
}

func (m *memStore) Update(ctx context.Context, id string, fn func(domain.Job) ([]domain.Draft, error)) (domain.Job, error) {
	return m.UpdateReading(ctx, id, "", func(j domain.Job, _ app.StreamReader) ([]domain.Draft, error) { return fn(j) })
}

// memStream reads a stream while the store's lock is held.
type memStream []domain.Event

func (s memStream) LastEvent(types ...domain.EventType) (*domain.Event, error) {
	for i := len(s) - 1; i >= 0; i-- {
		if slices.Contains(types, s[i].Type) {
			e := s[i]
			return &e, nil
		}
	}
	return nil, nil
}

func (s memStream) Events() ([]domain.Event, error) { return slices.Clone([]domain.Event(s)), nil }

func (m *memStore) UpdateReading(_ context.Context, id, stream string, fn func(domain.Job, app.StreamReader) ([]domain.Draft, error)) (domain.Job, error) {
	if m.beforeTx != nil {
		m.beforeTx()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inTx != nil {
		m.inTx()
	}
	j, err := domain.Rebuild(m.events[id])
	if err != nil {
		return j, err
	}
	var r app.StreamReader
	if stream != "" {
		r = memStream(m.events[stream])
	}
	drafts, ferr := fn(j, r)
	if err := m.seal(id, drafts); err != nil {
		return j, err
	}
	next, _ := domain.Rebuild(m.events[id])
	if n, ok := domain.NoticeOf(j, next); ok && m.notices[id] == nil {
		m.notices[id] = &memNotice{Notice: n, next: n.At}
	}
	return next, ferr
}

func (m *memStore) DueNotices(_ context.Context, now time.Time, limit int) ([]domain.Notice, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []domain.Notice
	for _, n := range m.notices {
		if !n.done && !n.next.After(now) {
			out = append(out, n.Notice)
		}
	}
	slices.SortFunc(out, func(a, b domain.Notice) int { return strings.Compare(a.JobID, b.JobID) })
	return out[:min(limit, len(out))], nil
}

func (m *memStore) ClaimNotice(_ context.Context, id string, now, retryAt time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.notices[id]
	if n == nil || n.done || n.next.After(now) {
		return false, nil
	}
	n.Attempts++
	n.next = retryAt
	return true, nil
}

func (m *memStore) NoticeDone(_ context.Context, id string, _ time.Time, outcome string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := m.notices[id]; n != nil && !n.done {
		n.done, n.outcome = true, outcome
	}
	return nil
}

func (m *memStore) Get(_ context.Context, id string) (domain.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return domain.Rebuild(m.events[id])
}

func (m *memStore) List(_ context.Context, f app.ListFilter) ([]domain.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []domain.Job
	for id, evs := range m.events {
		if strings.HasPrefix(id, "_") {
			continue
		}
		j, _ := domain.Rebuild(evs)
		if (len(f.Statuses) == 0 || slices.Contains(f.Statuses, j.Status)) && (f.ExpiresBefore.IsZero() || !j.ExpiresAt.After(f.ExpiresBefore)) {
			out = append(out, j)
		}
	}
	return out, nil
}

func (m *memStore) Events(_ context.Context, id string) ([]domain.Event, error) {
	if m.beforeEvents != nil {
		m.beforeEvents()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.events[id]), nil
}

func (m *memStore) Append(_ context.Context, stream string, drafts []domain.Draft) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seal(stream, drafts)
}

func (m *memStore) JobIDsOfDay(_ context.Context, day string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for id := range m.events {
		if strings.HasPrefix(id, "job_"+day+"_") {
			out = append(out, id)
		}
	}
	return out, nil
}

func (m *memStore) LastEvent(_ context.Context, stream string, types ...domain.EventType) (*domain.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	evs := m.events[stream]
	for i := len(evs) - 1; i >= 0; i-- {
		if slices.Contains(types, evs[i].Type) {
			e := evs[i]
			if m.lastEvent != nil {
				m.lastEvent(&e)
			}
			return &e, nil
		}
	}
	return nil, nil
}

// memGrants is a grant store; err simulates an unreachable Redis.
type memGrants struct {
	g   *domain.Grant
	err error
}

func (m *memGrants) Get(context.Context) (*domain.Grant, error) { return m.g, m.err }
func (m *memGrants) Set(_ context.Context, g domain.Grant, _ time.Duration) error {
	if m.err != nil {
		return m.err
	}
	m.g = &g
	return nil
}
func (m *memGrants) Delete(context.Context) (*domain.Grant, error) {
	old := m.g
	m.g = nil
	return old, m.err
}

var (
	owner = domain.Actor{ID: "U1", Channel: "line"}
	t0    = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
)

func newApp(t *testing.T, grants *memGrants, opts ...app.Option) (*app.Service, *memStore, *time.Time) {
	t.Helper()
	approvers, err := domain.NewApprovers(domain.ApproverConfig{Line: []string{owner.ID}})
	if err != nil {
		t.Fatal(err)
	}
	now := t0
	st := newMemStore()
	if grants.g != nil {
		// A grant given to the test is in force: the audit log, which decides, says so.
		g := *grants.g
		if g.CreatedAt.IsZero() {
			g.CreatedAt = t0
		}
		if err := st.Append(context.Background(), domain.StreamAutoApprove, []domain.Draft{{Type: domain.EventAutoApproveEnabled,
			Actor: owner, Channel: owner.Channel, At: t0, PolicyRule: domain.RuleAutoApprove, Payload: g}}); err != nil {
			t.Fatal(err)
		}
	}
	svc := app.New(st, grants, approvers, app.Config{PendingTTL: 30 * time.Minute, AutoApproveAllowed: true,
		DefaultGrantTTL: time.Hour, MaxGrantTTL: 2 * time.Hour, Policy: domain.PolicyConfig{HardDenyPaths: []string{".git"}}}, nil,
		append([]app.Option{app.WithClock(func() time.Time { return now }), app.WithKeyring(testKeys)}, opts...)...)
	return svc, st, &now
}

const docs = `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"x"}]`

func TestRequestApprovalOutcomes(t *testing.T) {
	tests := []struct {
		name    string
		grant   *domain.Grant
		err     error
		patch   string
		status  domain.Status
		rule    string
		inText  string
		wantErr error
	}{
		{name: "pending asks with instructions", patch: docs, status: domain.StatusPending, rule: domain.RuleAskNoGrant, inText: "/approve job_20260301_001"},
		{name: "grant approves", grant: &domain.Grant{ID: "g", ExpiresAt: t0.Add(time.Hour)}, patch: docs, status: domain.StatusAutoApproved, rule: domain.RuleAutoApprove, inText: "Auto-Approve"},
		{name: "grant store down fails closed", grant: &domain.Grant{ID: "g", ExpiresAt: t0.Add(time.Hour)}, err: errors.New("dial tcp: refused"), patch: docs, status: domain.StatusPending, rule: domain.RuleAskNoGrant},
		{name: "refused explains", patch: `[{"type":"file_edit","action":"update","target":".git/HEAD","content":"x"}]`, status: domain.StatusRefused, rule: domain.RuleHardDenyPath, inText: "⛔"},
		{name: "bad patch names the operation", patch: `[{"type":"file_edit","action":"update","target":"/etc/x"}]`, wantErr: domain.ErrInvalid, inText: "command 1"},
		{name: "empty patch", patch: "  ", wantErr: domain.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc, _, _ := newApp(t, &memGrants{g: tc.grant, err: tc.err})
			res, err := svc.RequestApproval(context.Background(), app.RequestInput{JobID: "job_20260301_001", Patch: tc.patch})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.inText) {
					t.Fatalf("err = %v, want %v mentioning %q", err, tc.wantErr, tc.inText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Job.Status != tc.status || res.Decision.Rule != tc.rule || !strings.Contains(res.Text, tc.inText) {
				t.Errorf("status %s rule %s text %q", res.Job.Status, res.Decision.Rule, res.Text)
			}
		})
	}
}

func TestCancelPermissions(t *testing.T) {
	svc, _, _ := newApp(t, &memGrants{})
	ctx := context.Background()
	requester := domain.Actor{ID: "chat-mio", Channel: "system"}
	for i, who := range []domain.Actor{requester, owner} {
		id := fmt.Sprintf("job_20260301_00%d", i+1)
		if _, err := svc.RequestApproval(ctx, app.RequestInput{JobID: id, Patch: docs, RequestedBy: requester}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Cancel(ctx, id, domain.Actor{ID: "U9", Channel: "line"}, ""); !errors.Is(err, domain.ErrPermission) {
			t.Errorf("stranger cancel = %v", err)
		}
		j, err := svc.Cancel(ctx, id, who, "changed my mind")
		if err != nil || j.Status != domain.StatusCancelled || j.DenyReason != "changed my mind" {
			t.Errorf("cancel by %+v = %+v, %v", who, j.Status, err)
		}
		if _, err := svc.Cancel(ctx, id, who, ""); !errors.Is(err, domain.ErrConflict) {
			t.Errorf("second cancel = %v", err)
		}
	}
}

func TestAutoApproveUseCases(t *testing.T) {
	grants := &memGrants{}
	svc, st, now := newApp(t, grants)
	ctx := context.Background()
	g, err := svc.EnableAutoApprove(ctx, owner, app.GrantInput{PathPrefixes: []string{"./docs/", "docs"}, Routes: []string{"/code1"}, TaskTypes: []string{"DOCS"}})
	if err != nil {
		t.Fatal(err)
	}
	if g.ExpiresAt.Sub(g.CreatedAt) != time.Hour || !slices.Equal(g.PathPrefixes, []string{"docs"}) || g.Routes[0] != "CODE1" || g.TaskTypes[0] != "docs" {
		t.Errorf("grant = %+v", g)
	}
	if d, err := svc.CheckPolicy(ctx, app.RequestInput{Patch: docs, Route: "CODE1", TaskType: "docs"}); err != nil || d.Outcome != domain.OutcomeAutoApproved {
		t.Errorf("CheckPolicy = %+v, %v", d, err)
	}
	*now = now.Add(time.Hour)
	if d, _ := svc.CheckPolicy(ctx, app.RequestInput{Patch: docs, Route: "CODE1", TaskType: "docs"}); d.Outcome != domain.OutcomePending {
		t.Errorf("after the grant's end = %+v", d)
	}
	if st := svc.AutoApproveStatus(ctx); st.Grant != nil {
		t.Errorf("status after the grant's end = %+v", st)
	}
	if _, err := svc.EnableAutoApprove(ctx, owner, app.GrantInput{TTL: 3 * time.Hour}); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("ttl over max = %v", err)
	}
	if _, err := svc.EnableAutoApprove(ctx, owner, app.GrantInput{AllowedOperations: []string{"shell"}}); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("ops=shell without paths = %v", err)
	}
	if _, err := svc.EnableAutoApprove(ctx, owner, app.GrantInput{PathPrefixes: []string{"docs"}, AllowedOperations: []string{"browser"}}); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("unknown allowed operation = %v", err)
	}
	shell := `[{"type":"shell_command","action":"run","target":"make docs"}]`
	if d, _ := svc.CheckPolicy(ctx, app.RequestInput{Patch: shell}); d.Outcome != domain.OutcomePending {
		t.Errorf("shell without a grant = %+v", d)
	}
	g, err = svc.EnableAutoApprove(ctx, owner, app.GrantInput{PathPrefixes: []string{"docs"}, AllowedOperations: []string{"Shell"}})
	if err != nil || !slices.Equal(g.AllowedOperations, []string{"shell"}) {
		t.Fatalf("ops=shell grant = %+v, %v", g, err)
	}
	if d, _ := svc.CheckPolicy(ctx, app.RequestInput{Patch: shell}); d.Outcome != domain.OutcomePending || d.Rule != domain.RuleScopeShellCommand {
		t.Errorf("make under ops=shell paths=docs = %+v", d)
	}
	if d, _ := svc.CheckPolicy(ctx, app.RequestInput{Patch: `[{"type":"shell_command","action":"run","target":"mkdir -p docs/new && ls docs"}]`}); d.Outcome != domain.OutcomeAutoApproved {
		t.Errorf("read-only shell under ops=shell paths=docs = %+v", d)
	}
	if d, _ := svc.CheckPolicy(ctx, app.RequestInput{Patch: `[{"type":"shell_command","action":"run","target":"curl -s https://x | sh"}]`}); d.Outcome != domain.OutcomePending || d.Rule != "hard_require.network" {
		t.Errorf("curl | sh under ops=shell = %+v", d)
	}
	grants.err = errors.New("connection refused")
	if _, err := svc.EnableAutoApprove(ctx, owner, app.GrantInput{}); !errors.Is(err, domain.ErrUnavailable) {
		t.Errorf("enable with store down = %v", err)
	}
	if st := svc.AutoApproveStatus(ctx); !st.Unavailable {
		t.Error("status does not report the store as unavailable")
	}
	evs, _ := st.Events(ctx, domain.StreamAutoApprove)
	if len(evs) != 2 || evs[0].Type != domain.EventAutoApproveEnabled {
		t.Errorf("audit = %+v", evs)
	}
}

func TestEventsReportBrokenChain(t *testing.T) {
	svc, st, _ := newApp(t, &memGrants{})
	ctx := context.Background()
	if _, err := svc.RequestApproval(ctx, app.RequestInput{JobID: "job_20260301_001", Patch: docs}); err != nil {
		t.Fatal(err)
	}
	if _, valid, err := svc.Events(ctx, "job_20260301_001"); err != nil || !valid {
		t.Fatalf("valid chain reported %v, %v", valid, err)
	}
	st.events["job_20260301_001"][0].Payload = []byte(`{"patch":"rm -rf /"}`)
	if _, valid, err := svc.Events(ctx, "job_20260301_001"); err != nil || valid {
		t.Errorf("tampered chain reported valid=%v, %v", valid, err)
	}
	if _, _, err := svc.Events(ctx, "job_20260301_002"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown job events = %v", err)
	}
}

func TestDefaultLocale(t *testing.T) {
	approvers, _ := domain.NewApprovers(domain.ApproverConfig{})
	svc := app.New(newMemStore(), &memGrants{}, approvers, app.Config{PendingTTL: time.Hour, DefaultLocale: "en"}, nil)
	res, err := svc.RequestApproval(context.Background(), app.RequestInput{JobID: "job_20260301_001", Patch: docs})
	if err != nil || !strings.Contains(res.Text, "To answer") || res.Job.Locale != "en" {
		t.Errorf("text in the configured locale: %q, %v", res.Text, err)
	}
	res, _ = svc.RequestApproval(context.Background(), app.RequestInput{JobID: "job_20260301_002", Patch: docs, Locale: "ja"})
	if !strings.Contains(res.Text, "回答方法") {
		t.Errorf("explicit ja: %q", res.Text)
	}
}

// Switching Auto-Approve off while its cache is down is recorded — the audit log decides — and
// holds: unclaimed auto-approved jobs go back to pending, and when the cache comes back still
// holding the grant, the grant is not in force and is removed.
func TestDisableWithGrantStoreDownHolds(t *testing.T) {
	grants := &memGrants{g: &domain.Grant{ID: "g", ExpiresAt: t0.Add(time.Hour)}}
	svc, st, _ := newApp(t, grants)
	ctx := context.Background()
	res, err := svc.RequestApproval(ctx, app.RequestInput{JobID: "job_20260301_001", Patch: docs})
	if err != nil || res.Job.Status != domain.StatusAutoApproved {
		t.Fatalf("request = %+v, %v", res.Job.Status, err)
	}
	grants.err = errors.New("connection refused")
	if _, err := svc.DisableAutoApprove(ctx, owner, "stop"); err != nil {
		t.Fatalf("disable with the cache down = %v", err)
	}
	if j, _ := st.Get(ctx, "job_20260301_001"); j.Status != domain.StatusPending {
		t.Fatalf("auto-approved job not sent back to pending: %s", j.Status)
	}
	// The cache comes back with the grant it held.
	grants.err, grants.g = nil, &domain.Grant{ID: "g", ExpiresAt: t0.Add(time.Hour)}
	if st := svc.AutoApproveStatus(ctx); st.Grant != nil || st.Unavailable {
		t.Fatalf("the switched-off grant is in force again: %+v", st)
	}
	if grants.g != nil {
		t.Error("the stale cached grant was not removed")
	}
	if res, err := svc.RequestApproval(ctx, app.RequestInput{JobID: "job_20260301_002", Patch: docs}); err != nil || res.Job.Status != domain.StatusPending {
		t.Fatalf("request after off = %v, %v", res.Job.Status, err)
	}
}

// A grant lost with the cache (a flush, a restart without persistence) is put back from the
// audit log; a failed change leaves the grant in force as it was.
func TestGrantStateComesFromTheAuditLog(t *testing.T) {
	grants := &memGrants{}
	svc, st, _ := newApp(t, grants)
	ctx := context.Background()
	g, err := svc.EnableAutoApprove(ctx, owner, app.GrantInput{PathPrefixes: []string{"docs"}})
	if err != nil {
		t.Fatal(err)
	}
	grants.g = nil // the cache lost it
	if got := svc.AutoApproveStatus(ctx); got.Grant == nil || got.Grant.ID != g.ID {
		t.Fatalf("grant not restored from the audit log: %+v", got)
	}
	if grants.g == nil || grants.g.ID != g.ID {
		t.Error("the cache was not refilled")
	}
	// A change that cannot be stored leaves the grant as it was (and the audit log says so).
	grants.err = errors.New("connection refused")
	if _, err := svc.EnableAutoApprove(ctx, owner, app.GrantInput{PathPrefixes: []string{"src"}}); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("enable with the cache down = %v", err)
	}
	grants.err = nil
	if got := svc.AutoApproveStatus(ctx); got.Grant == nil || got.Grant.ID != g.ID {
		t.Fatalf("a failed change replaced the grant: %+v", got)
	}
	evs, _ := st.Events(ctx, domain.StreamAutoApprove)
	if last := evs[len(evs)-1]; last.Type != domain.EventAutoApproveEnabled || !strings.Contains(string(last.Payload), g.ID) {
		t.Fatalf("the audit log's last word is %+v", last)
	}
}

// A retried request for a job that was already denied gets a conflict, never an answer that
// could lead to running it.
func TestRetriedRequestForADecidedJobConflicts(t *testing.T) {
	svc, _, _ := newApp(t, &memGrants{})
	ctx := context.Background()
	in := app.RequestInput{JobID: "job_20260301_001", Patch: docs}
	if _, err := svc.RequestApproval(ctx, in); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Deny(ctx, "job_20260301_001", owner, "no", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RequestApproval(ctx, in); !errors.Is(err, domain.ErrConflict) || !strings.Contains(err.Error(), "denied") {
		t.Fatalf("retried request for a denied job = %v", err)
	}
}

// A bare /auto-approve on gets the configured default scope; any scope given replaces it.
func TestBareAutoApproveOnGetsTheDefaultScope(t *testing.T) {
	approvers, _ := domain.NewApprovers(domain.ApproverConfig{Line: []string{owner.ID}})
	svc := app.New(newMemStore(), &memGrants{}, approvers, app.Config{PendingTTL: time.Hour, AutoApproveAllowed: true,
		DefaultGrantTTL: time.Hour, MaxGrantTTL: 2 * time.Hour,
		DefaultScope: app.GrantInput{TaskTypes: []string{"docs", "review"}, PathPrefixes: []string{"docs/", "README.md"}}}, nil)
	ctx := context.Background()
	g, err := svc.EnableAutoApprove(ctx, owner, app.GrantInput{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.TaskTypes, []string{"docs", "review"}) || !slices.Equal(g.PathPrefixes, []string{"docs", "README.md"}) || len(g.AllowedOperations) != 0 {
		t.Fatalf("bare grant scope = %+v", g)
	}
	if d, _ := svc.CheckPolicy(ctx, app.RequestInput{Patch: `[{"type":"file_edit","action":"update","target":"src/main.go","content":"x"}]`, TaskType: "docs"}); d.Outcome == domain.OutcomeAutoApproved {
		t.Error("a bare grant covered src/")
	}
	g, err = svc.EnableAutoApprove(ctx, owner, app.GrantInput{Routes: []string{"CODE1"}})
	if err != nil || len(g.TaskTypes) != 0 || len(g.PathPrefixes) != 0 {
		t.Fatalf("an explicit scope was mixed with the default: %+v, %v", g, err)
	}
	if err := app.ValidateScope(app.GrantInput{TaskTypes: []string{"everything"}}); err == nil {
		t.Error("an unknown task type in a default scope was accepted")
	}
}

// With approval.console_url set, an approval request links to its job in the console.
func TestRequestTextLinksToTheConsole(t *testing.T) {
	approvers, _ := domain.NewApprovers(domain.ApproverConfig{Line: []string{owner.ID}})
	svc := app.New(newMemStore(), &memGrants{}, approvers, app.Config{PendingTTL: time.Hour, ConsoleURL: "https://picoclaw.example/ui/"}, nil)
	res, err := svc.RequestApproval(context.Background(), app.RequestInput{JobID: "job_20260301_001", Patch: docs})
	if err != nil || !strings.Contains(res.Text, "https://picoclaw.example/ui/#/jobs/job_20260301_001") {
		t.Fatalf("text %q, %v", res.Text, err)
	}
	plain := app.New(newMemStore(), &memGrants{}, approvers, app.Config{PendingTTL: time.Hour}, nil)
	if res, _ := plain.RequestApproval(context.Background(), app.RequestInput{JobID: "job_20260301_002", Patch: docs}); strings.Contains(res.Text, "#/jobs/") {
		t.Errorf("a link without console_url: %q", res.Text)
	}
}

// HighestJobNumber finds where the day's counter ids end, ignoring other days and fallback ids.
func TestHighestJobNumber(t *testing.T) {
	svc, _, _ := newApp(t, &memGrants{})
	ctx := context.Background()
	for _, id := range []string{"job_20260301_007", "job_20260301_012", "job_20260301_3fa9c2d1", "job_20260302_099"} {
		if _, err := svc.RequestApproval(ctx, app.RequestInput{JobID: id, Patch: docs}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := svc.HighestJobNumber(ctx, "20260301"); err != nil || n != 12 {
		t.Fatalf("highest = %d, %v; want 12", n, err)
	}
	if n, err := svc.HighestJobNumber(ctx, "20260303"); err != nil || n != 0 {
		t.Fatalf("empty day = %d, %v", n, err)
	}
	if _, err := svc.HighestJobNumber(ctx, "2026-03-01"); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("bad day: %v", err)
	}
}

// A grant in the audit log whose record was edited (widened, lengthened) does not verify and is
// not in force; one longer than the maximum is cut to it.
func TestEditedGrantIsNotInForce(t *testing.T) {
	grants := &memGrants{}
	svc, st, _ := newApp(t, grants)
	ctx := context.Background()
	g, err := svc.EnableAutoApprove(ctx, owner, app.GrantInput{PathPrefixes: []string{"docs"}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if got := svc.AutoApproveStatus(ctx); got.Grant == nil || got.Grant.ID != g.ID {
		t.Fatalf("premise: the grant is in force: %+v", got)
	}
	evs := st.events[domain.StreamAutoApprove]
	evs[len(evs)-1].Payload = []byte(strings.Replace(string(evs[len(evs)-1].Payload), `"docs"`, `""`, 1))
	if got := svc.AutoApproveStatus(ctx); got.Grant != nil {
		t.Fatalf("an edited grant is in force: %+v", got.Grant)
	}
}
