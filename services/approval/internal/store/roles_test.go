package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lib/pq"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

// TestRuntimeRoleCannotAlterTheLog migrates as the owner, runs the store as its own role, and
// then tries, as that role, everything that would rewrite history.
func TestRuntimeRoleCannotAlterTheLog(t *testing.T) {
	ctx := context.Background()
	db := testinfra.Postgres(t)
	_, runtimeDSN := testinfra.PostgresRole(t, db)
	s, err := store.OpenPostgres(ctx, runtimeDSN, store.WithKeyring(testKeys), store.WithMigrateDSN(db.DSN))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if s.LogAlterable() {
		t.Fatal("LogAlterable = true for the runtime role")
	}
	svc := newService(t, s, newClock())
	id := "job_20260301_001"
	request(t, svc, id, docsPatch)
	if _, err := svc.Approve(ctx, id, approver, ""); err != nil {
		t.Fatal(err) // the role may insert events and update the read model
	}
	for _, q := range []string{
		`UPDATE approval_events SET type = 'denied' WHERE job_id = '` + id + `'`,
		`DELETE FROM approval_events WHERE job_id = '` + id + `'`,
		`TRUNCATE approval_events`,
		`ALTER TABLE approval_events DISABLE TRIGGER approval_events_no_update`,
		`ALTER TABLE approval_events DISABLE TRIGGER ALL`,
		`DROP TRIGGER approval_events_no_update ON approval_events`,
		`DROP TABLE approval_events`,
		`ALTER TABLE approval_events RENAME TO approval_events_old`,
		`CREATE OR REPLACE FUNCTION approval_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END; $$`,
		`DELETE FROM approval_jobs WHERE job_id = '` + id + `'`,
		`TRUNCATE approval_jobs`,
		`UPDATE approval_audit_legacy SET max_event_id = 1000000`,
		`DELETE FROM approval_schema_migrations`,
	} {
		_, err := s.DB().ExecContext(ctx, q)
		var pgErr *pq.Error
		if !errors.As(err, &pgErr) || (pgErr.Code != "42501" && !strings.Contains(pgErr.Message, "must be owner")) {
			t.Errorf("as the runtime role, %q: %v; want a permission error", q, err)
		}
	}
	evs := events(t, s, id)
	if len(evs) != 2 || evs[1].Type != domain.EventGranted {
		t.Fatalf("events after the attempts: %+v", evs)
	}
	assertConsistent(t, s, id)

	// One DSN for both (no owner connection): the service still runs, and says its role can
	// alter the log.
	single, err := store.OpenPostgres(ctx, db.DSN, store.WithKeyring(testKeys))
	if err != nil {
		t.Fatal(err)
	}
	defer single.Close()
	if !single.LogAlterable() {
		t.Error("LogAlterable = false for the owner's own connection")
	}
}

// TestRuntimeGrantsNeedTheRole: naming a role that does not exist fails the migration with a
// message that says what to do.
func TestRuntimeGrantsNeedTheRole(t *testing.T) {
	ctx := context.Background()
	db := testinfra.Postgres(t)
	_, runtimeDSN := testinfra.PostgresRole(t, db)
	_, err := store.OpenPostgres(ctx, runtimeDSN, store.WithKeyring(testKeys), store.WithMigrateDSN(db.DSN),
		store.WithRuntimeRole("picoclaw_no_such_role_x"))
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("err = %v", err)
	}
}

// TestTamperedJobRefusesWrites: on both stores, a claim or decision on a job whose log or row
// was changed is refused with ErrTampered and records nothing.
func TestTamperedJobRefusesWritesPostgres(t *testing.T) { tamperedRefuses(t, openPostgres) }

func tamperedRefuses(t *testing.T, open func(*testing.T) backend) {
	ctx := context.Background()
	b, c := open(t), newClock()
	svc := newService(t, b.store, c)
	for _, tc := range []struct {
		id     string
		deny   bool
		tamper string
	}{
		// The row says granted, the log says denied.
		{"job_20260301_001", true, `UPDATE approval_jobs SET status = 'granted' WHERE job_id = $1`},
		// The decision event was rewritten to a grant.
		{"job_20260301_002", true, `UPDATE approval_events SET type = 'granted' WHERE job_id = $1 AND seq = 2`},
		// The last event (the grant) removed, the row left as it was.
		{"job_20260301_003", false, `DELETE FROM approval_events WHERE job_id = $1 AND seq = 2`},
	} {
		request(t, svc, tc.id, docsPatch)
		var err error
		if tc.deny {
			_, err = svc.Deny(ctx, tc.id, approver, "no", "")
		} else {
			_, err = svc.Approve(ctx, tc.id, approver, "")
		}
		if err != nil {
			t.Fatal(err)
		}
		b.tamper(t, tc.tamper, tc.id)
		before := len(events(t, b.store, tc.id))
		if _, err := svc.ClaimJob(ctx, tc.id, "executor-1"); !errors.Is(err, domain.ErrTampered) {
			t.Errorf("%s: claim = %v, want ErrTampered", tc.id, err)
		}
		if _, err := svc.Cancel(ctx, tc.id, approver, "x"); !errors.Is(err, domain.ErrTampered) {
			t.Errorf("%s: cancel = %v, want ErrTampered", tc.id, err)
		}
		if after := len(events(t, b.store, tc.id)); after != before {
			t.Errorf("%s: %d events appended to a tampered log", tc.id, after-before)
		}
	}
}
