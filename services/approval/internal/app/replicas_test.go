package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// memLeases are named leases in memory (app.Leases), shared by the replicas of a test.
type memLeases struct {
	mu     sync.Mutex
	holder map[string]string
	until  map[string]time.Time
}

func newMemLeases() *memLeases {
	return &memLeases{holder: map[string]string{}, until: map[string]time.Time{}}
}

func (l *memLeases) AcquireLease(_ context.Context, name, holder string, now, until time.Time) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h, ok := l.holder[name]; ok && h != holder && now.Before(l.until[name]) {
		return false, nil
	}
	l.holder[name], l.until[name] = holder, until
	return true, nil
}

func (l *memLeases) ReleaseLease(_ context.Context, name, holder string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holder[name] == holder {
		delete(l.holder, name)
	}
	return nil
}

// replica is another instance of the service on the same store, grants and clock.
func replica(t *testing.T, st *memStore, grants *memGrants, now *time.Time, opts ...app.Option) *app.Service {
	t.Helper()
	approvers, err := domain.NewApprovers(domain.ApproverConfig{Line: []string{owner.ID}})
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]app.Option{app.WithClock(func() time.Time { return *now }), app.WithKeyring(testKeys)}, opts...)
	return app.New(st, grants, approvers, app.Config{PendingTTL: 30 * time.Minute, AutoApproveAllowed: true,
		DefaultGrantTTL: time.Hour, MaxGrantTTL: 2 * time.Hour, ClaimLease: time.Minute,
		Policy: domain.PolicyConfig{HardDenyPaths: []string{".git"}}}, nil, opts...)
}

func types(evs []domain.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Type)
	}
	return out
}

func approved(t *testing.T, svc *app.Service, id string) {
	t.Helper()
	ctx := context.Background()
	if _, err := svc.RequestApproval(ctx, app.RequestInput{JobID: id, Patch: docs, TaskType: "docs"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Approve(ctx, id, owner, ""); err != nil {
		t.Fatal(err)
	}
}

// Two executors race for one job: the loser's claim is refused, and its report — the refusal
// that used to fail the job the winner was running — is refused too and recorded; a report with
// the winner's name but without its token is refused as well. Only the holder finishes the job.
func TestReportFromAnExecutorThatDoesNotHoldTheClaimIsRefused(t *testing.T) {
	svc, st, _ := newApp(t, &memGrants{})
	ctx := context.Background()
	id := "job_20260301_001"
	approved(t, svc, id)
	won, err := svc.ClaimJob(ctx, id, "executor-a")
	if err != nil || won.ClaimToken == 0 || won.ClaimedBy != "executor-a" {
		t.Fatalf("claim = %+v, %v", won, err)
	}
	if _, err := svc.ClaimJob(ctx, id, "executor-b"); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("second claim = %v, want ErrConflict", err)
	}
	for _, r := range []struct {
		executor string
		token    int64
	}{{"executor-b", won.ClaimToken}, {"executor-b", 0}, {"executor-a", 0}, {"executor-a", won.ClaimToken - 1}} {
		if _, err := svc.ReportExecution(ctx, id, domain.ExecRefused, r.executor, r.token, nil, "claim refused"); !errors.Is(err, domain.ErrNotHolder) {
			t.Fatalf("report by %s with token %d = %v, want ErrNotHolder", r.executor, r.token, err)
		}
	}
	if j, _ := st.Get(ctx, id); j.Status != domain.StatusExecuting {
		t.Fatalf("a refused report moved the job to %s", j.Status)
	}
	if _, err := svc.ReportExecution(ctx, id, domain.ExecCompleted, "executor-a", won.ClaimToken, []byte(`{"success":true}`), ""); err != nil {
		t.Fatal(err)
	}
	evs, _ := st.Events(ctx, id)
	want := "requested granted claimed claim_rejected report_rejected report_rejected report_rejected report_rejected execution_completed"
	if got := join(types(evs)); got != want {
		t.Fatalf("events %s\nwant   %s", got, want)
	}
}

func join(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += " "
		}
		out += s
	}
	return out
}

// A claim is a lease: while its holder renews it nobody can take the job; once the holder
// stops (dies), the job is listed as lapsed and another executor takes it over with a new
// token. The old holder can neither renew nor report any more.
func TestLapsedClaimIsTakenOverByAnotherExecutor(t *testing.T) {
	svc, st, now := newApp(t, &memGrants{})
	ctx := context.Background()
	id := "job_20260301_002"
	approved(t, svc, id)
	a, err := svc.ClaimJob(ctx, id, "executor-a")
	if err != nil {
		t.Fatal(err)
	}
	// The default lease is two minutes; executor-a renews at 100 s.
	*now = now.Add(100 * time.Second)
	if _, err := svc.RenewClaim(ctx, id, "executor-a", a.ClaimToken); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(100 * time.Second) // 200 s after the claim: alive thanks to the renewal
	if ids, _ := svc.LapsedClaims(ctx, 0); len(ids) != 0 {
		t.Fatalf("lapsed = %v while renewed", ids)
	}
	if _, err := svc.ClaimJob(ctx, id, "executor-b"); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("claim of a live lease = %v", err)
	}
	// executor-a dies: no renewal for the whole lease.
	*now = now.Add(2 * time.Minute)
	ids, err := svc.LapsedClaims(ctx, 0)
	if err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("lapsed = %v, %v", ids, err)
	}
	b, err := svc.ClaimJob(ctx, id, "executor-b")
	if err != nil || b.ClaimedBy != "executor-b" || b.ClaimToken <= a.ClaimToken || b.Status != domain.StatusExecuting {
		t.Fatalf("takeover = %+v, %v", b, err)
	}
	if !b.ExecutedAt.Equal(t0) {
		t.Errorf("executed_at moved to %v: the execution began at the first claim", b.ExecutedAt)
	}
	if _, err := svc.RenewClaim(ctx, id, "executor-a", a.ClaimToken); !errors.Is(err, domain.ErrNotHolder) {
		t.Fatalf("renewal by the old holder = %v", err)
	}
	if _, err := svc.ReportExecution(ctx, id, domain.ExecFailed, "executor-a", a.ClaimToken, nil, "late"); !errors.Is(err, domain.ErrNotHolder) {
		t.Fatalf("report by the old holder = %v", err)
	}
	if _, err := svc.ReportExecution(ctx, id, domain.ExecCompleted, "executor-b", b.ClaimToken, []byte(`{"success":true}`), "already applied"); err != nil {
		t.Fatal(err)
	}
	if ids, _ := svc.LapsedClaims(ctx, 0); len(ids) != 0 {
		t.Fatalf("lapsed after completion = %v", ids)
	}
	evs, _ := st.Events(ctx, id)
	want := "requested granted claimed claim_renewed claim_rejected claim_lapsed claimed report_rejected report_rejected execution_completed"
	if got := join(types(evs)); got != want {
		t.Fatalf("events %s\nwant   %s", got, want)
	}
}

// A switch-off of Auto-Approve that lands after everything the claim read before its
// transaction, but before the transaction, stops the claim: the grant is read inside it.
func TestSwitchOffJustBeforeTheClaimsTransactionStopsTheClaim(t *testing.T) {
	grants := &memGrants{g: &domain.Grant{ID: "grant_1", TaskTypes: []string{"docs"}, ExpiresAt: t0.Add(time.Hour)}}
	svc, st, _ := newApp(t, grants)
	ctx := context.Background()
	id := "job_20260301_003"
	res, err := svc.RequestApproval(ctx, app.RequestInput{JobID: id, Patch: docs, TaskType: "docs"})
	if err != nil || res.Job.Status != domain.StatusAutoApproved {
		t.Fatalf("premise: auto-approved: %+v, %v", res.Job, err)
	}
	st.beforeTx = func() {
		st.beforeTx = nil
		// The switch-off as DisableAutoApprove records it, its revocations not yet reached.
		if err := st.Append(ctx, domain.StreamAutoApprove, []domain.Draft{{Type: domain.EventAutoApproveDisabled, Actor: owner,
			Channel: owner.Channel, At: t0, PolicyRule: domain.RuleAutoApprove, Payload: map[string]string{"grant_id": "grant_1"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.ClaimJob(ctx, id, "executor-a"); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("claim after the switch-off = %v, want ErrConflict", err)
	}
	j, _ := st.Get(ctx, id)
	if j.Status != domain.StatusPending {
		t.Fatalf("status %s, want pending (back to a person)", j.Status)
	}
}

// A job auto-approved in the instant Auto-Approve was switched off — its request read the grant
// just before the switch-off, which then found no such job to revoke — is sent back to a person
// by the sweeper, audited. Jobs of a grant still in force, and jobs a policy rule allowed, stay.
func TestSweeperSendsBackJobsAutoApprovedByAGrantNoLongerInForce(t *testing.T) {
	grants := &memGrants{g: &domain.Grant{ID: "grant_1", TaskTypes: []string{"docs"}, ExpiresAt: t0.Add(time.Hour)}}
	svc, st, now := newApp(t, grants)
	ctx := context.Background()
	stale, kept := "job_20260301_004", "job_20260301_005"
	if res, err := svc.RequestApproval(ctx, app.RequestInput{JobID: stale, Patch: docs, TaskType: "docs"}); err != nil || res.Job.Status != domain.StatusAutoApproved {
		t.Fatalf("premise: %+v, %v", res.Job, err)
	}
	// The switch-off is recorded; the revocation pass it runs has not seen the job.
	if err := st.Append(ctx, domain.StreamAutoApprove, []domain.Draft{{Type: domain.EventAutoApproveDisabled, Actor: owner,
		Channel: owner.Channel, At: t0, PolicyRule: domain.RuleAutoApprove, Payload: map[string]string{"grant_id": "grant_1"}}}); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(time.Minute)
	g, err := svc.EnableAutoApprove(ctx, owner, app.GrantInput{TaskTypes: []string{"docs"}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := svc.RequestApproval(ctx, app.RequestInput{JobID: kept, Patch: docs, TaskType: "docs"}); err != nil || res.Job.GrantID != g.ID {
		t.Fatalf("premise: %+v, %v", res.Job, err)
	}
	if _, err := svc.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if j, _ := st.Get(ctx, stale); j.Status != domain.StatusPending || j.AutoApproved {
		t.Fatalf("stale job: %s (auto %v), want pending", j.Status, j.AutoApproved)
	}
	if j, _ := st.Get(ctx, kept); j.Status != domain.StatusAutoApproved {
		t.Fatalf("job of the grant in force: %s", j.Status)
	}
	evs, _ := st.Events(ctx, stale)
	if last := evs[len(evs)-1]; last.Type != domain.EventAutoApprovalRevoked || last.Actor != domain.System {
		t.Fatalf("last event %+v", last)
	}
	// Nothing more to do on the next pass.
	before := len(evs)
	if _, err := svc.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if evs, _ := st.Events(ctx, stale); len(evs) != before {
		t.Fatal("a second sweep recorded again")
	}
}

// Two replicas of approval share the sweeper: only the lease holder sweeps; the other takes
// over once the holder stops renewing (or gives the lease up). An expiry is counted once even
// when two sweeps meet on one job.
func TestOneSweeperAtATime(t *testing.T) {
	grants := &memGrants{}
	_, st, now := newApp(t, grants)
	leases := newMemLeases()
	a := replica(t, st, grants, now, app.WithLeases(leases))
	b := replica(t, st, grants, now, app.WithLeases(leases))
	ctx := context.Background()
	for _, id := range []string{"job_20260301_006", "job_20260301_007"} {
		if _, err := a.RequestApproval(ctx, app.RequestInput{JobID: id, Patch: docs}); err != nil {
			t.Fatal(err)
		}
	}
	*now = now.Add(31 * time.Minute)
	const lease = 90 * time.Second
	if held, n, err := a.SweepIfHolder(ctx, "approval-a", lease); !held || n != 2 || err != nil {
		t.Fatalf("a: held %v, expired %d, %v", held, n, err)
	}
	if held, n, err := b.SweepIfHolder(ctx, "approval-b", lease); held || n != 0 || err != nil {
		t.Fatalf("b while a holds the lease: held %v, expired %d, %v", held, n, err)
	}
	*now = now.Add(lease - time.Second)
	if held, _, _ := a.SweepIfHolder(ctx, "approval-a", lease); !held {
		t.Fatal("a lost its lease while renewing it")
	}
	// a dies: b takes over once a's lease ran out.
	*now = now.Add(lease - time.Second)
	if held, _, _ := b.SweepIfHolder(ctx, "approval-b", lease); held {
		t.Fatal("b took the lease before it ran out")
	}
	*now = now.Add(time.Second)
	if held, _, _ := b.SweepIfHolder(ctx, "approval-b", lease); !held {
		t.Fatal("b did not take over a lease that ran out")
	}
	if held, _, _ := a.SweepIfHolder(ctx, "approval-a", lease); held {
		t.Fatal("a came back and swept next to b")
	}
	if err := leases.ReleaseLease(ctx, app.SweeperLease, "approval-b"); err != nil {
		t.Fatal(err)
	}
	if held, _, _ := a.SweepIfHolder(ctx, "approval-a", lease); !held {
		t.Fatal("a did not take a released lease at once")
	}

	// Without the lease (two sweeps meeting anyway), each expiry counts for one of them only.
	if _, err := a.RequestApproval(ctx, app.RequestInput{JobID: "job_20260301_008", Patch: docs}); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(31 * time.Minute)
	na, err := a.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := b.Sweep(ctx)
	if err != nil || na+nb != 1 {
		t.Fatalf("expiries counted %d + %d, want 1 in all (%v)", na, nb, err)
	}
}

// An auto-approved execution whose executor died is not taken over once Auto-Approve is off:
// the job fails once (no takeover is tried again), audited, and nothing more of it runs.
func TestTakeoverOfAnAutoApprovedJobAfterTheSwitchOffFailsIt(t *testing.T) {
	grants := &memGrants{g: &domain.Grant{ID: "grant_1", TaskTypes: []string{"docs"}, ExpiresAt: t0.Add(time.Hour)}}
	svc, st, now := newApp(t, grants)
	ctx := context.Background()
	id := "job_20260301_004"
	res, err := svc.RequestApproval(ctx, app.RequestInput{JobID: id, Patch: docs, TaskType: "docs"})
	if err != nil || res.Job.Status != domain.StatusAutoApproved {
		t.Fatalf("premise: auto-approved: %+v, %v", res.Job, err)
	}
	if _, err := svc.ClaimJob(ctx, id, "executor-a"); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(ctx, domain.StreamAutoApprove, []domain.Draft{{Type: domain.EventAutoApproveDisabled, Actor: owner,
		Channel: owner.Channel, At: t0, PolicyRule: domain.RuleAutoApprove, Payload: map[string]string{"grant_id": "grant_1"}}}); err != nil {
		t.Fatal(err)
	}
	grants.g = nil
	*now = now.Add(5 * time.Minute) // executor-a died: its lease ran out
	if _, err := svc.ClaimJob(ctx, id, "executor-b"); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("takeover after the switch-off = %v, want ErrConflict", err)
	}
	j, _ := st.Get(ctx, id)
	if j.Status != domain.StatusFailed {
		t.Fatalf("status %s, want failed", j.Status)
	}
	if ids, _ := svc.LapsedClaims(ctx, 0); len(ids) != 0 {
		t.Fatalf("still offered for takeover: %v", ids)
	}
	if _, err := svc.ClaimJob(ctx, id, "executor-c"); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("another takeover = %v", err)
	}
	evs, _ := st.Events(ctx, id)
	want := "requested auto_approved claimed claim_lapsed execution_failed claim_rejected"
	if got := join(types(evs)); got != want {
		t.Fatalf("events %s\nwant   %s", got, want)
	}
}

// While the grant store cannot be read, an auto-approved execution whose executor stopped is not
// failed: the takeover waits (Unavailable, nothing recorded) and succeeds once the grant answers.
func TestTakeoverWaitsOutAGrantStoreOutage(t *testing.T) {
	grants := &memGrants{g: &domain.Grant{ID: "grant_1", TaskTypes: []string{"docs"}, ExpiresAt: t0.Add(time.Hour)}}
	svc, st, now := newApp(t, grants)
	ctx := context.Background()
	id := "job_20260301_005"
	if res, err := svc.RequestApproval(ctx, app.RequestInput{JobID: id, Patch: docs, TaskType: "docs"}); err != nil || res.Job.Status != domain.StatusAutoApproved {
		t.Fatalf("premise: auto-approved: %+v, %v", res.Job, err)
	}
	if _, err := svc.ClaimJob(ctx, id, "executor-a"); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(5 * time.Minute)
	grants.err = errors.New("redis: connection refused")
	if _, err := svc.ClaimJob(ctx, id, "executor-b"); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("takeover during the outage = %v, want ErrUnavailable", err)
	}
	if j, _ := st.Get(ctx, id); j.Status != domain.StatusExecuting {
		t.Fatalf("status %s during the outage, want executing", j.Status)
	}
	grants.err = nil
	if j, err := svc.ClaimJob(ctx, id, "executor-b"); err != nil || j.ClaimedBy != "executor-b" {
		t.Fatalf("takeover after the outage: %+v, %v", j, err)
	}
}

// The audit store of a single process has one connection: a claim holds it for its transaction
// and checks the Auto-Approve chain inside, while a status read checks the same chain from
// outside and waits for the connection. A fresh process (nothing verified yet) doing both at
// once must not have each wait for the other.
func TestChainCheckInsideAndOutsideATransactionDoNotWaitForEachOther(t *testing.T) {
	grants := &memGrants{}
	svc, st, now := newApp(t, grants)
	ctx := context.Background()
	if _, err := svc.EnableAutoApprove(ctx, owner, app.GrantInput{PathPrefixes: []string{"docs"}}); err != nil {
		t.Fatal(err)
	}
	id := "job_20260301_009"
	if res, err := svc.RequestApproval(ctx, app.RequestInput{JobID: id, Patch: docs, TaskType: "docs"}); err != nil || res.Decision.Outcome != domain.OutcomeAutoApproved {
		t.Fatalf("request = %+v, %v", res, err)
	}
	// The same store seen by a process that has verified nothing yet.
	fresh := replica(t, st, grants, now)

	statusIn, claimHolds := make(chan struct{}), make(chan struct{})
	st.beforeEvents = func() {
		st.beforeEvents = nil
		close(statusIn) // the status read is about to wait for the store
		<-claimHolds
	}
	statusDone := make(chan app.GrantStatus, 1)
	go func() { statusDone <- fresh.AutoApproveStatus(ctx) }()
	within(t, statusIn, "the status read did not read the log")
	st.inTx = func() {
		st.inTx = nil
		close(claimHolds) // the claim holds the store; the status read now waits for it
	}
	claimDone := make(chan error, 1)
	go func() {
		_, err := fresh.ClaimJob(ctx, id, "executor-a")
		claimDone <- err
	}()
	select {
	case err := <-claimDone:
		if err != nil {
			t.Fatalf("claim = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the claim and the status read wait for each other")
	}
	select {
	case got := <-statusDone:
		if got.Unavailable || got.Grant == nil {
			t.Fatalf("status = %+v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the status read did not end after the claim")
	}
}

// within waits for ch to close, failing the test with what after 10 s.
func within(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
}

// The deciding event is read apart from the chain that is verified: an event swapped in for
// that one read (a wider scope under the same grant) is not the verified chain's and does not
// count, nor is it remembered as verified.
func TestDecidingEventMustBeTheVerifiedChains(t *testing.T) {
	grants := &memGrants{}
	svc, st, now := newApp(t, grants)
	ctx := context.Background()
	g, err := svc.EnableAutoApprove(ctx, owner, app.GrantInput{PathPrefixes: []string{"docs"}})
	if err != nil {
		t.Fatal(err)
	}
	wider := g
	wider.PathPrefixes = []string{"src"}
	forged, err := json.Marshal(wider)
	if err != nil {
		t.Fatal(err)
	}
	fresh := replica(t, st, grants, now)
	st.lastEvent = func(e *domain.Event) { e.Payload = forged }
	if got := fresh.AutoApproveStatus(ctx); !got.Unavailable || got.Grant != nil {
		t.Fatalf("status with a swapped event = %+v, want unavailable", got)
	}
	st.lastEvent = nil
	if got := fresh.AutoApproveStatus(ctx); got.Grant == nil || !slices.Equal(got.Grant.PathPrefixes, []string{"docs"}) {
		t.Fatalf("status with the log as written = %+v", got)
	}
}
