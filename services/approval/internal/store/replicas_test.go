//go:build !serveronly

package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

// What several replicas of approval and of the executor rely on, on every store: leases, claim
// leases with fencing, and a claim that reads the Auto-Approve log inside its transaction.
func TestReplicaContractPostgres(t *testing.T) { runReplicaContract(t, openPostgres) }
func TestReplicaContractSQLite(t *testing.T)   { runReplicaContract(t, openSQLite) }

// appendWaiting reports whether an Append to the Auto-Approve stream is waiting for a
// transaction to end: on Postgres, a backend waits for the stream's advisory lock; on SQLite,
// a caller waits for the store's one connection.
func appendWaiting(t *testing.T, s app.Store) func() bool {
	switch st := s.(type) {
	case *store.Postgres:
		return func() bool {
			var n int
			err := st.DB().QueryRowContext(context.Background(), `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
				AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 1)`,
				"picoclaw.approval.stream."+domain.StreamAutoApprove).Scan(&n)
			if err != nil {
				t.Fatal(err)
			}
			return n > 0
		}
	case *store.SQLite:
		before := st.DB().Stats().WaitCount
		return func() bool { return st.DB().Stats().WaitCount > before }
	}
	t.Fatalf("no way to see a waiting append on %T", s)
	return nil
}

func runReplicaContract(t *testing.T, open func(*testing.T) backend) {
	ctx := context.Background()

	t.Run("a lease has one holder at a time", func(t *testing.T) {
		b := open(t)
		l, ok := b.store.(app.Leases)
		if !ok {
			t.Fatalf("%T does not keep leases", b.store)
		}
		t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		take := func(holder string, at time.Duration) bool {
			t.Helper()
			held, err := l.AcquireLease(ctx, "sweeper", holder, t0.Add(at), t0.Add(at+time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			return held
		}
		if !take("a", 0) {
			t.Fatal("a free lease was not taken")
		}
		if take("b", 30*time.Second) {
			t.Fatal("b took a lease a holds")
		}
		if !take("a", 50*time.Second) { // renewal: a holds it until 110 s
			t.Fatal("a could not renew its lease")
		}
		if take("b", 100*time.Second) {
			t.Fatal("b took a renewed lease")
		}
		if !take("b", 110*time.Second) {
			t.Fatal("b did not take a lease that ran out")
		}
		if take("a", 120*time.Second) {
			t.Fatal("a took back a lease b holds")
		}
		if err := l.ReleaseLease(ctx, "sweeper", "a"); err != nil {
			t.Fatal(err)
		}
		if take("c", 121*time.Second) {
			t.Fatal("a released a lease it did not hold")
		}
		if err := l.ReleaseLease(ctx, "sweeper", "b"); err != nil {
			t.Fatal(err)
		}
		if !take("c", 122*time.Second) {
			t.Fatal("a released lease was not taken at once")
		}
		// Leases are independent by name.
		if held, err := l.AcquireLease(ctx, "other", "a", t0.Add(122*time.Second), t0.Add(time.Hour)); err != nil || !held {
			t.Fatalf("another lease: %v, %v", held, err)
		}
	})

	t.Run("claim lease: fencing and takeover, rebuildable", func(t *testing.T) {
		b, c := open(t), newClock()
		svc := newService(t, b.store, c)
		id := "job_20260301_201"
		request(t, svc, id, docsPatch)
		if _, err := svc.Approve(ctx, id, approver, ""); err != nil {
			t.Fatal(err)
		}
		a, err := svc.ClaimJob(ctx, id, "executor-a")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.ReportExecution(ctx, id, domain.ExecRefused, "executor-b", a.ClaimToken, nil, "claim refused"); !errors.Is(err, domain.ErrNotHolder) {
			t.Fatalf("report by a non-holder = %v", err)
		}
		c.advance(time.Minute)
		if _, err := svc.RenewClaim(ctx, id, "executor-a", a.ClaimToken); err != nil {
			t.Fatal(err)
		}
		c.advance(3 * time.Minute) // executor-a died after renewing
		lapsed, err := svc.LapsedClaims(ctx, 0)
		if err != nil || len(lapsed) != 1 || lapsed[0] != id {
			t.Fatalf("lapsed = %v, %v", lapsed, err)
		}
		bj, err := svc.ClaimJob(ctx, id, "executor-b")
		if err != nil || bj.ClaimedBy != "executor-b" || bj.ClaimToken <= a.ClaimToken {
			t.Fatalf("takeover = %+v, %v", bj, err)
		}
		if _, err := svc.ReportExecution(ctx, id, domain.ExecCompleted, "executor-a", a.ClaimToken, []byte(`{"success":true}`), ""); !errors.Is(err, domain.ErrNotHolder) {
			t.Fatalf("report by the old holder = %v", err)
		}
		if _, err := svc.ReportExecution(ctx, id, domain.ExecCompleted, "executor-b", bj.ClaimToken, []byte(`{"success":true}`), ""); err != nil {
			t.Fatal(err)
		}
		evs := events(t, b.store, id)
		for typ, n := range map[domain.EventType]int{domain.EventClaimed: 2, domain.EventClaimRenewed: 1, domain.EventClaimLapsed: 1,
			domain.EventReportRejected: 2, domain.EventExecutionCompleted: 1} {
			if got := countType(evs, typ); got != n {
				t.Errorf("%d %s events, want %d", got, typ, n)
			}
		}
		assertConsistent(t, b.store, id)
		// A restart keeps the lease, the holder and the token.
		s2 := b.reopen(t)
		got, err := s2.Get(ctx, id)
		if err != nil || got.ClaimedBy != "executor-b" || got.ClaimToken != bj.ClaimToken || !got.LeaseExpiresAt.Equal(bj.LeaseExpiresAt) {
			t.Fatalf("after reopen: %+v, %v", got, err)
		}
	})

	// A switch-off appended to the Auto-Approve log while a claim's transaction reads it waits
	// until that transaction ended: the claim decided on the log as it stands at its commit.
	t.Run("an append to the stream a transaction reads waits for it", func(t *testing.T) {
		b, c := open(t), newClock()
		svc := newService(t, b.store, c)
		if _, err := svc.EnableAutoApprove(ctx, approver, app.GrantInput{TaskTypes: []string{"docs"}, PathPrefixes: []string{"docs"}, TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		id := "job_20260301_202"
		if res := request(t, svc, id, docsPatch); res.Job.Status != domain.StatusAutoApproved {
			t.Fatalf("premise: auto-approved, got %s", res.Job.Status)
		}
		waiting := appendWaiting(t, b.store)
		appended := make(chan error, 1)
		early := false
		job, err := b.store.UpdateReading(ctx, id, domain.StreamAutoApprove, func(j domain.Job, log app.StreamReader) ([]domain.Draft, error) {
			last, err := log.LastEvent(domain.EventAutoApproveEnabled, domain.EventAutoApproveDisabled)
			if err != nil || last == nil || last.Type != domain.EventAutoApproveEnabled {
				t.Fatalf("the log read in the transaction: %+v, %v", last, err)
			}
			go func() {
				appended <- b.store.Append(context.WithoutCancel(ctx), domain.StreamAutoApprove, []domain.Draft{{Type: domain.EventAutoApproveDisabled,
					Actor: approver, Channel: approver.Channel, At: c.now(), PolicyRule: domain.RuleAutoApprove, Payload: map[string]string{"reason": "off"}}})
			}()
			testinfra.Eventually(t, 10*time.Second, "the switch-off to wait or land", func() bool {
				select {
				case err := <-appended:
					t.Errorf("the switch-off committed inside the claim's transaction (%v)", err)
					early = true
					return true
				default:
					return waiting()
				}
			})
			return j.Claim(domain.ClaimCheck{ExecutorID: "executor-a", ActualHash: j.ContentHash, GrantActive: true}, c.now())
		})
		if err != nil || job.Status != domain.StatusExecuting {
			t.Fatalf("claim = %+v, %v", job, err)
		}
		if !early {
			if err := <-appended; err != nil {
				t.Fatal(err)
			}
		}
		if g := svc.AutoApproveStatus(ctx); g.Grant != nil {
			t.Fatalf("the switch-off did not land after the claim: %+v", g.Grant)
		}
		assertConsistent(t, b.store, id)
	})
}
