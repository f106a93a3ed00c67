package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

// backend is one store implementation under the contract.
type backend struct {
	store app.Store
	// reopen closes the store and opens a new one on the same database (a restart).
	reopen func(t *testing.T) app.Store
	// exec runs raw SQL under the store, with the store's own database role.
	exec func(t *testing.T, sql string, args ...any) error
	// tamper runs raw SQL as the database's owner would, past the append-only triggers.
	tamper func(t *testing.T, sql string, args ...any)
	// audit reads what verification reads.
	audit app.AuditReader
}

var testKeys = func() *domain.Keyring {
	k, err := domain.NewKeyring([]byte("store-test-audit-key-0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	return k
}()

// openPostgres migrates as the owner and runs the store as a role of its own, as deployed.
func openPostgres(t *testing.T) backend {
	t.Helper()
	db := testinfra.Postgres(t)
	_, runtimeDSN := testinfra.PostgresRole(t, db)
	ctx := context.Background()
	open := func() (*store.Postgres, error) {
		return store.OpenPostgres(ctx, runtimeDSN, store.WithKeyring(testKeys), store.WithMigrateDSN(db.DSN))
	}
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	if s.LogAlterable() {
		t.Fatal("the runtime role can alter the log")
	}
	cur := s
	t.Cleanup(func() { cur.Close() })
	return backend{
		store: s,
		reopen: func(t *testing.T) app.Store {
			cur.Close()
			n, err := open()
			if err != nil {
				t.Fatal(err)
			}
			cur = n
			return n
		},
		exec: func(t *testing.T, sql string, args ...any) error {
			_, err := cur.DB().ExecContext(ctx, sql, args...)
			return err
		},
		tamper: func(t *testing.T, sql string, args ...any) { pgOwnerExec(t, db.DSN, sql, args...) },
		audit:  auditOf(func() app.AuditReader { return cur }),
	}
}

// pgOwnerExec runs sql as the superuser of the test server with triggers off.
func pgOwnerExec(t *testing.T, dsn, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, sql, args...)
		return err
	}); err != nil {
		t.Fatalf("tamper %q: %v", sql, err)
	}
}

// auditOf follows the backend's current store across reopen.
type auditOf func() app.AuditReader

func (a auditOf) StreamIDs(ctx context.Context) ([]string, error) { return a().StreamIDs(ctx) }
func (a auditOf) AuditRead(ctx context.Context, id string) (*domain.ReadModel, []domain.Event, error) {
	return a().AuditRead(ctx, id)
}

func TestContractPostgres(t *testing.T) { runContract(t, openPostgres) }

// clock is a settable clock for the service.
type clock struct{ t atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.t.Store(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC).UnixMicro())
	return c
}
func (c *clock) now() time.Time          { return time.UnixMicro(c.t.Load()).UTC() }
func (c *clock) advance(d time.Duration) { c.t.Add(d.Microseconds()) }

var (
	approver = domain.Actor{ID: "Uapprover", Channel: "line", DisplayName: "owner"}
	stranger = domain.Actor{ID: "Ustranger", Channel: "line"}
)

const docsPatch = `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"hello\n"}]`

func newService(t *testing.T, s app.Store, c *clock) *app.Service {
	t.Helper()
	rdb := testinfra.Redis(t)
	approvers, err := domain.NewApprovers(domain.ApproverConfig{Line: []string{approver.ID}, BotIDs: []string{"Ubot"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := app.Config{PendingTTL: 30 * time.Minute, AutoApproveAllowed: true, DefaultGrantTTL: time.Hour, MaxGrantTTL: 24 * time.Hour,
		Policy: domain.PolicyConfig{HardDenyPaths: []string{".git"}, CostLimitUSD: 1, TokenLimit: 100000}}
	return app.New(s, store.NewRedisGrants(redisKV(t, rdb), rdb.Prefix, []byte("test-grant-seal-key"), nil), approvers, cfg, nil, app.WithClock(c.now), app.WithKeyring(testKeys))
}

func request(t *testing.T, svc *app.Service, id, patchText string) app.RequestResult {
	t.Helper()
	res, err := svc.RequestApproval(context.Background(), app.RequestInput{
		JobID: id, Plan: "update the docs", Patch: patchText, TaskType: "docs", Route: "CODE2", SessionID: "line:Uapprover",
		Channel: "line", RequestedBy: domain.Actor{ID: "chat-mio", Channel: "system"}, Locale: "ja",
	})
	if err != nil {
		t.Fatalf("RequestApproval %s: %v", id, err)
	}
	return res
}

func events(t *testing.T, s app.Store, id string) []domain.Event {
	t.Helper()
	evs, err := s.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func countType(evs []domain.Event, typ domain.EventType) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// assertConsistent checks the chain and that the job rebuilt from its events equals the
// read model.
func assertConsistent(t *testing.T, s app.Store, id string) {
	t.Helper()
	evs := events(t, s, id)
	if err := testKeys.VerifyChain(evs); err != nil {
		t.Fatalf("chain of %s: %v", id, err)
	}
	rebuilt, err := domain.Rebuild(evs)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rebuilt, stored) {
		t.Fatalf("rebuilt job differs from the read model:\nrebuilt %+v\nstored  %+v", rebuilt, stored)
	}
}

func runContract(t *testing.T, open func(*testing.T) backend) {
	ctx := context.Background()

	t.Run("create get rebuild and duplicate", func(t *testing.T) {
		b, c := open(t), newClock()
		svc := newService(t, b.store, c)
		res := request(t, svc, " JOB_20260301_001 ", docsPatch)
		if res.Job.ID != "job_20260301_001" || res.Job.Status != domain.StatusPending || res.Job.Version != 1 {
			t.Fatalf("job = %+v", res.Job)
		}
		assertConsistent(t, b.store, "job_20260301_001")
		again := request(t, svc, "job_20260301_001", docsPatch)
		if again.Job.Version != 1 {
			t.Errorf("a retried request added events: version %d", again.Job.Version)
		}
		_, err := svc.RequestApproval(ctx, app.RequestInput{JobID: "job_20260301_001", Patch: `[{"type":"shell_command","action":"run","target":"ls"}]`})
		if !errors.Is(err, domain.ErrConflict) {
			t.Errorf("other content under the same id: %v, want ErrConflict", err)
		}
		if _, err := b.store.Get(ctx, "job_20260301_999"); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("Get unknown = %v, want ErrNotFound", err)
		}
	})

	t.Run("racing decisions: first wins, losers conflict and are recorded", func(t *testing.T) {
		b, c := open(t), newClock()
		svc := newService(t, b.store, c)
		id := "job_20260301_002"
		request(t, svc, id, docsPatch)
		const n = 100
		var (
			wg        sync.WaitGroup
			wins      atomic.Int32
			conflicts atomic.Int32
			other     = make(chan error, n)
		)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				if i%2 == 0 {
					_, err = svc.Approve(ctx, id, approver, "")
				} else {
					_, err = svc.Deny(ctx, id, approver, fmt.Sprintf("no %d", i), "")
				}
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, domain.ErrConflict):
					conflicts.Add(1)
				default:
					other <- err
				}
			}()
		}
		wg.Wait()
		close(other)
		for err := range other {
			t.Errorf("unexpected error: %v", err)
		}
		if wins.Load() != 1 || conflicts.Load() != n-1 {
			t.Fatalf("wins %d conflicts %d, want 1 and %d", wins.Load(), conflicts.Load(), n-1)
		}
		evs := events(t, b.store, id)
		if got := countType(evs, domain.EventGranted) + countType(evs, domain.EventDenied); got != 1 {
			t.Errorf("%d decision events, want 1", got)
		}
		if got := countType(evs, domain.EventDecisionRejected); got != n-1 {
			t.Errorf("%d decision_rejected events, want %d", got, n-1)
		}
		assertConsistent(t, b.store, id)
	})

	t.Run("claim once, and never after the stored patch changed", func(t *testing.T) {
		b, c := open(t), newClock()
		svc := newService(t, b.store, c)
		id := "job_20260301_003"
		request(t, svc, id, docsPatch)
		if _, err := svc.ClaimJob(ctx, id, "executor-1"); !errors.Is(err, domain.ErrConflict) {
			t.Errorf("claim of a pending job = %v, want ErrConflict", err)
		}
		if _, err := svc.Approve(ctx, id, approver, ""); err != nil {
			t.Fatal(err)
		}
		job, err := svc.ClaimJob(ctx, id, "executor-1")
		if err != nil || job.Status != domain.StatusExecuting || job.Patch != docsPatch {
			t.Fatalf("claim = %+v, %v", job, err)
		}
		if _, err := svc.ClaimJob(ctx, id, "executor-2"); !errors.Is(err, domain.ErrConflict) {
			t.Errorf("second claim = %v, want ErrConflict", err)
		}
		evs := events(t, b.store, id)
		if countType(evs, domain.EventClaimed) != 1 || countType(evs, domain.EventClaimRejected) != 2 {
			t.Errorf("claimed %d, claim_rejected %d; want 1 and 2", countType(evs, domain.EventClaimed), countType(evs, domain.EventClaimRejected))
		}
		if _, err := svc.ReportExecution(ctx, id, domain.ExecCompleted, "executor-1", job.ClaimToken, []byte(`{"success":true}`), ""); err != nil {
			t.Fatal(err)
		}
		assertConsistent(t, b.store, id)

		id2 := "job_20260301_004"
		request(t, svc, id2, docsPatch)
		if _, err := svc.Approve(ctx, id2, approver, ""); err != nil {
			t.Fatal(err)
		}
		altered := `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"rm -rf ~\n"}]`
		if err := b.exec(t, `UPDATE approval_jobs SET patch = $1 WHERE job_id = $2`, altered, id2); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.ClaimJob(ctx, id2, "executor-1"); !errors.Is(err, domain.ErrHashMismatch) {
			t.Fatalf("claim of altered patch = %v, want ErrHashMismatch", err)
		}
		evs = events(t, b.store, id2)
		if last := evs[len(evs)-1]; last.Type != domain.EventHashMismatch {
			t.Errorf("last event %s, want hash_mismatch", last.Type)
		}
		if j, _ := b.store.Get(ctx, id2); j.Status != domain.StatusFailed {
			t.Errorf("status after mismatch = %s, want failed", j.Status)
		}
		if _, err := svc.ClaimJob(ctx, id2, "executor-1"); !errors.Is(err, domain.ErrConflict) {
			t.Errorf("claim after mismatch = %v, want ErrConflict", err)
		}
	})

	t.Run("executor reported hash mismatch is recorded", func(t *testing.T) {
		b, c := open(t), newClock()
		svc := newService(t, b.store, c)
		id := "job_20260301_005"
		request(t, svc, id, docsPatch)
		if _, err := svc.Approve(ctx, id, approver, ""); err != nil {
			t.Fatal(err)
		}
		claimed, err := svc.ClaimJob(ctx, id, "executor-1")
		if err != nil {
			t.Fatal(err)
		}
		job, err := svc.ReportExecution(ctx, id, domain.ExecHashMismatch, "executor-1", claimed.ClaimToken, nil, "workspace copy differs")
		if err != nil || job.Status != domain.StatusFailed {
			t.Fatalf("report = %+v, %v", job, err)
		}
		if countType(events(t, b.store, id), domain.EventHashMismatch) != 1 {
			t.Error("no hash_mismatch event")
		}
		assertConsistent(t, b.store, id)
	})

	t.Run("events are append-only", func(t *testing.T) {
		b, c := open(t), newClock()
		svc := newService(t, b.store, c)
		id := "job_20260301_006"
		request(t, svc, id, docsPatch)
		if err := b.exec(t, `UPDATE approval_events SET type = 'granted' WHERE job_id = $1`, id); err == nil {
			t.Error("updating an event succeeded")
		}
		if err := b.exec(t, `DELETE FROM approval_events WHERE job_id = $1`, id); err == nil {
			t.Error("deleting an event succeeded")
		}
		assertConsistent(t, b.store, id)
	})

	t.Run("sweeper expires pending jobs, expired is not denied", func(t *testing.T) {
		b, c := open(t), newClock()
		svc := newService(t, b.store, c)
		request(t, svc, "job_20260301_007", docsPatch)
		c.advance(10 * time.Minute)
		request(t, svc, "job_20260301_008", docsPatch)
		c.advance(21 * time.Minute)
		n, err := svc.Sweep(ctx)
		if err != nil || n != 1 {
			t.Fatalf("Sweep = %d, %v; want 1", n, err)
		}
		j, _ := b.store.Get(ctx, "job_20260301_007")
		if j.Status != domain.StatusExpired {
			t.Errorf("status = %s, want expired", j.Status)
		}
		if _, err := svc.Approve(ctx, "job_20260301_007", approver, ""); !errors.Is(err, domain.ErrConflict) {
			t.Errorf("approve after expiry = %v, want ErrConflict", err)
		}
		// The sweeper has not run for the second job yet: a late approval still finds it expired.
		c.advance(10 * time.Minute)
		if _, err := svc.Approve(ctx, "job_20260301_008", approver, ""); !errors.Is(err, domain.ErrExpired) {
			t.Errorf("late approve = %v, want ErrExpired", err)
		}
		j, _ = b.store.Get(ctx, "job_20260301_008")
		if j.Status != domain.StatusExpired {
			t.Errorf("status = %s, want expired", j.Status)
		}
		assertConsistent(t, b.store, "job_20260301_007")
		assertConsistent(t, b.store, "job_20260301_008")
	})

	t.Run("unknown approver is refused and audited", func(t *testing.T) {
		b, c := open(t), newClock()
		svc := newService(t, b.store, c)
		id := "job_20260301_009"
		request(t, svc, id, docsPatch)
		for _, who := range []domain.Actor{stranger, {ID: "Ubot", Channel: "line"}, {ID: "Uapprover", Channel: "slack"}, {}} {
			if _, err := svc.Approve(ctx, id, who, ""); !errors.Is(err, domain.ErrPermission) {
				t.Errorf("approve by %+v = %v, want ErrPermission", who, err)
			}
		}
		if got := countType(events(t, b.store, id), domain.EventDecisionRejected); got != 4 {
			t.Errorf("%d refusals audited, want 4", got)
		}
		if _, err := svc.Approve(ctx, "job_20260301_404", stranger, ""); !errors.Is(err, domain.ErrPermission) {
			t.Errorf("approve unknown job by stranger = %v", err)
		}
		if got := countType(events(t, b.store, domain.StreamAccess), domain.EventAccessRefused); got != 1 {
			t.Errorf("%d access refusals on the access stream, want 1", got)
		}
		if _, err := svc.Approve(ctx, "job_20260301_404", approver, ""); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("approve unknown job = %v, want ErrNotFound", err)
		}
		assertConsistent(t, b.store, id)
	})

	t.Run("restart keeps pending jobs and history", func(t *testing.T) {
		b, c := open(t), newClock()
		svc := newService(t, b.store, c)
		request(t, svc, "job_20260301_010", docsPatch)
		request(t, svc, "job_20260301_011", docsPatch)
		if _, err := svc.Deny(ctx, "job_20260301_011", approver, "not now", ""); err != nil {
			t.Fatal(err)
		}
		s2 := b.reopen(t)
		svc2 := newService(t, s2, c)
		pending, err := svc2.List(ctx, app.ListFilter{Statuses: []domain.Status{domain.StatusPending}})
		if err != nil || len(pending) != 1 || pending[0].ID != "job_20260301_010" {
			t.Fatalf("pending after restart = %+v, %v", pending, err)
		}
		denied, _ := s2.Get(ctx, "job_20260301_011")
		if denied.Status != domain.StatusDenied || denied.DenyReason != "not now" {
			t.Errorf("denied job after restart = %+v", denied)
		}
		if _, err := svc2.Approve(ctx, "job_20260301_010", approver, ""); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"job_20260301_010", "job_20260301_011"} {
			assertConsistent(t, s2, id)
		}
	})

	t.Run("list filters and pages", func(t *testing.T) {
		b, c := open(t), newClock()
		svc := newService(t, b.store, c)
		for i := 1; i <= 3; i++ {
			request(t, svc, fmt.Sprintf("job_20260301_1%02d", i), docsPatch)
			c.advance(time.Second)
		}
		if _, err := svc.Approve(ctx, "job_20260301_102", approver, ""); err != nil {
			t.Fatal(err)
		}
		all, _ := svc.List(ctx, app.ListFilter{})
		if len(all) != 3 || all[0].ID != "job_20260301_103" {
			t.Fatalf("list = %d jobs, first %v", len(all), all)
		}
		granted, _ := svc.List(ctx, app.ListFilter{Statuses: []domain.Status{domain.StatusGranted}})
		if len(granted) != 1 || granted[0].ID != "job_20260301_102" {
			t.Errorf("granted = %+v", granted)
		}
		page, _ := svc.List(ctx, app.ListFilter{Limit: 1, Offset: 1})
		if len(page) != 1 || page[0].ID != "job_20260301_102" {
			t.Errorf("page = %+v", page)
		}
		if _, err := svc.List(ctx, app.ListFilter{Statuses: []domain.Status{"bogus"}}); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("bogus status = %v", err)
		}
	})
}
