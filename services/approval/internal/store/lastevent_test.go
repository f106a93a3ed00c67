package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// onBothStores runs test against a fresh Postgres and a fresh SQLite store (Postgres alone in a
// build with -tags serveronly).
func onBothStores(t *testing.T, test func(t *testing.T, b backend)) {
	stores := sqliteStores()
	stores["postgres"] = openPostgres
	for name, open := range stores {
		t.Run(name, func(t *testing.T) { test(t, open(t)) })
	}
}

// LastEvent answers with the newest event of the named types on a stream, on both stores.
func TestLastEvent(t *testing.T) {
	onBothStores(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		if e, err := b.store.LastEvent(ctx, domain.StreamAutoApprove, domain.EventAutoApproveEnabled); err != nil || e != nil {
			t.Fatalf("empty stream: %+v, %v", e, err)
		}
		at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		for i, typ := range []domain.EventType{domain.EventAutoApproveEnabled, domain.EventAutoApproveDisabled, domain.EventAccessRefused} {
			if err := b.store.Append(ctx, domain.StreamAutoApprove, []domain.Draft{{Type: typ, Actor: approver, Channel: "line",
				At: at.Add(time.Duration(i) * time.Minute), Payload: map[string]int{"n": i}}}); err != nil {
				t.Fatal(err)
			}
		}
		e, err := b.store.LastEvent(ctx, domain.StreamAutoApprove, domain.EventAutoApproveEnabled, domain.EventAutoApproveDisabled)
		if err != nil || e == nil || e.Type != domain.EventAutoApproveDisabled || e.Seq != 2 {
			t.Fatalf("last = %+v, %v; want the disabled event (seq 2)", e, err)
		}
		if e, _ := b.store.LastEvent(ctx, domain.StreamAutoApprove, domain.EventAutoApproveEnabled); e == nil || e.Seq != 1 || string(e.Payload) != `{"n":0}` {
			t.Fatalf("last enabled = %+v", e)
		}
	})
}

// JobIDsOfDay lists exactly the day's jobs, on both stores.
func TestJobIDsOfDay(t *testing.T) {
	onBothStores(t, func(t *testing.T, b backend) {
		svc := newService(t, b.store, newClock())
		for _, id := range []string{"job_20260301_007", "job_20260301_3fa9c2d1", "job_20260302_001"} {
			request(t, svc, id, docsPatch)
		}
		ids, err := b.store.JobIDsOfDay(context.Background(), "20260301")
		if err != nil || len(ids) != 2 {
			t.Fatalf("ids %v, %v", ids, err)
		}
		if n, err := svc.HighestJobNumber(context.Background(), "20260301"); err != nil || n != 7 {
			t.Fatalf("highest %d, %v", n, err)
		}
	})
}
