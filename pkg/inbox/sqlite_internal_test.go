//go:build !serveronly

package inbox

import (
	"context"
	"errors"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate/sqlstatetest"
)

// After a look that found entries, the next goes straight to the write transaction: it answers
// as the first look would (nothing new, a missing group), and a look that finds nothing makes the
// next one read first again.
func TestLookAfterABurstAnswersAsTheFirst(t *testing.T) {
	ctx := context.Background()
	db, e, cfg, s := sqliteStoreForTest(t, "inbox:burst")
	q := e.queue(cfg).(*sqliteQueue)
	if _, err := q.deliverNew(ctx, "c1", 10); !errors.Is(err, errNoGroup) {
		t.Fatalf("no group: %v", err)
	}
	if err := q.ensureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, Event{ID: "e1", Key: "k"}, Event{ID: "e2", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	if es, err := q.deliverNew(ctx, "c1", 1); err != nil || len(es) != 1 || es[0].eventID != "e1" || !q.found.Load() {
		t.Fatalf("first look: %v, %v, found %v", es, err, q.found.Load())
	}
	if es, err := q.deliverNew(ctx, "c1", 10); err != nil || len(es) != 1 || es[0].eventID != "e2" || !q.found.Load() {
		t.Fatalf("second look: %v, %v, found %v", es, err, q.found.Load())
	}
	if es, err := q.deliverNew(ctx, "c1", 10); err != nil || len(es) != 0 || q.found.Load() {
		t.Fatalf("nothing new: %v, %v, found %v", es, err, q.found.Load())
	}
	if _, err := s.Append(ctx, Event{ID: "e3", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	if es, err := q.deliverNew(ctx, "c1", 10); err != nil || len(es) != 1 {
		t.Fatalf("third look: %v, %v", es, err)
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM inbox_groups WHERE stream = ?`, cfg.Stream); err != nil {
		t.Fatal(err)
	}
	if _, err := q.deliverNew(ctx, "c1", 10); !errors.Is(err, errNoGroup) || q.found.Load() {
		t.Fatalf("group gone after a burst: %v, found %v", err, q.found.Load())
	}
}

func init() {
	testEngines["sqlite"] = func(t *testing.T, stream string) (Engine, Config, *Store) {
		_, e, cfg, s := sqliteStoreForTest(t, stream)
		return e, cfg, s
	}
}

// sqliteStoreForTest is a store of stream (group "g") on a SQLite database of the test's own.
func sqliteStoreForTest(t *testing.T, stream string) (*sqlstate.DB, Engine, Config, *Store) {
	t.Helper()
	db := sqlstatetest.New(t).DB()
	e, err := SQLiteEngine(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Stream: stream, Group: "g", Seal: []byte("inbox-test-seal-key-0123456789")}
	s, err := NewStoreOn(e, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return db, e, cfg, s
}
