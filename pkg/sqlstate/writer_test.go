package sqlstate_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
)

func kvTable(t *testing.T) *sqlstate.DB {
	t.Helper()
	db := open(t, filepath.Join(t.TempDir(), "state.db"))
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background(), "test", `CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db
}

func put(k string, v int) func(tx *sql.Tx) error {
	return func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO kv (k, v) VALUES (?, ?)`, k, v)
		return err
	}
}

func keys(t *testing.T, db *sqlstate.DB) map[string]int {
	t.Helper()
	rows, err := db.Query(`SELECT k, v FROM kv`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var v int
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// held starts a Tx that stays open until release is closed, so the calls made meanwhile queue
// up and run together as the next batch.
func held(t *testing.T, db *sqlstate.DB) (release func(), wait func()) {
	t.Helper()
	in, out := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.Tx(context.Background(), func(tx *sql.Tx) error {
			close(in)
			<-out
			_, err := tx.Exec(`INSERT INTO kv (k, v) VALUES ('held', 0)`)
			return err
		})
	}()
	<-in
	return func() { close(out) }, func() {
		if err := <-done; err != nil {
			t.Errorf("held transaction: %v", err)
		}
	}
}

// queued starts n calls made while a transaction runs and returns once they all wait.
func queued(t *testing.T, db *sqlstate.DB, fns []func(tx *sql.Tx) error, ctxs []context.Context) []chan error {
	t.Helper()
	res := make([]chan error, len(fns))
	for i, fn := range fns {
		res[i] = make(chan error, 1)
		ctx := context.Background()
		if ctxs != nil && ctxs[i] != nil {
			ctx = ctxs[i]
		}
		// One at a time, in order: each is in the queue before the next is made.
		go func() { res[i] <- db.Tx(ctx, fn) }()
		sqlstate.WaitQueued(t, db, i+1)
	}
	return res
}

func TestConcurrentTxAllCommit(t *testing.T) {
	db := kvTable(t)
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			if err := db.Tx(context.Background(), put(fmt.Sprint("k", i), i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := len(keys(t, db)); got != 200 {
		t.Fatalf("%d rows after 200 committed transactions", got)
	}
}

func TestQueuedCallsShareOneTransaction(t *testing.T) {
	db := kvTable(t)
	release, wait := held(t, db)
	var mu sync.Mutex
	seen := map[*sql.Tx]int{}
	fns := make([]func(tx *sql.Tx) error, 5)
	for i := range fns {
		fns[i] = func(tx *sql.Tx) error {
			mu.Lock()
			seen[tx]++
			mu.Unlock()
			return put(fmt.Sprint("q", i), i)(tx)
		}
	}
	res := queued(t, db, fns, nil)
	release()
	wait()
	for _, r := range res {
		if err := <-r; err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 1 {
		t.Fatalf("5 calls queued behind one transaction ran in %d transactions, want 1", len(seen))
	}
	if got := len(keys(t, db)); got != 6 {
		t.Fatalf("%d rows, want 6", got)
	}
}

func TestOneCallsErrorUndoesOnlyItsOwnWrites(t *testing.T) {
	db := kvTable(t)
	release, wait := held(t, db)
	boom := errors.New("boom")
	fns := []func(tx *sql.Tx) error{
		put("a", 1),
		func(tx *sql.Tx) error {
			if err := put("b", 2)(tx); err != nil {
				return err
			}
			return boom
		},
		put("a", 3), // a constraint error: undone alone
		put("c", 4),
	}
	res := queued(t, db, fns, nil)
	release()
	wait()
	want := []error{nil, boom, nil, nil}
	for i, r := range res {
		err := <-r
		if i == 2 {
			if err == nil {
				t.Fatal("a duplicate key was accepted")
			}
			continue
		}
		if !errors.Is(err, want[i]) {
			t.Fatalf("call %d: %v, want %v", i, err, want[i])
		}
	}
	got := keys(t, db)
	if len(got) != 3 || got["a"] != 1 || got["c"] != 4 || got["held"] != 0 {
		t.Fatalf("rows %v, want held, a=1, c=4 (b undone with its call's error)", got)
	}
}

func TestCallWhoseContextEndedIsNotRun(t *testing.T) {
	db := kvTable(t)
	release, wait := held(t, db)
	ctx, cancel := context.WithCancel(context.Background())
	ran := false
	fns := []func(tx *sql.Tx) error{put("a", 1), func(tx *sql.Tx) error { ran = true; return nil }, put("c", 3)}
	res := queued(t, db, fns, []context.Context{nil, ctx, nil})
	cancel()
	release()
	wait()
	for i, r := range res {
		err := <-r
		if (i == 1) != errors.Is(err, context.Canceled) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if ran {
		t.Fatal("a call whose context had ended was run")
	}
	if got := keys(t, db); len(got) != 3 {
		t.Fatalf("rows %v", got)
	}
}

func TestBrokenSharedTransactionRunsTheOthersAlone(t *testing.T) {
	db := kvTable(t)
	release, wait := held(t, db)
	runs := map[string]int{}
	var mu sync.Mutex
	counted := func(k string, v int) func(tx *sql.Tx) error {
		return func(tx *sql.Tx) error {
			mu.Lock()
			runs[k]++
			mu.Unlock()
			return put(k, v)(tx)
		}
	}
	fns := []func(tx *sql.Tx) error{
		counted("a", 1),
		// Ends the shared transaction under the others' feet, as SQLite does after an I/O error.
		func(tx *sql.Tx) error { _, err := tx.Exec(`ROLLBACK`); return err },
		counted("c", 3),
	}
	res := queued(t, db, fns, nil)
	release()
	wait()
	for i, r := range res {
		if err := <-r; (i == 1) != (err != nil) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	got := keys(t, db)
	if len(got) != 3 || got["a"] != 1 || got["c"] != 3 {
		t.Fatalf("rows %v, want held, a and c, each once", got)
	}
	if runs["a"] != 2 || runs["c"] != 1 {
		t.Fatalf("runs %v: a (done before the break) runs again alone, c (after it) once", runs)
	}
}

// A Tx called from inside another's fn would wait for itself: it fails after the busy timeout
// as SQLite's own lock wait does, and the queue goes on.
func TestNestedTxFailsAfterTheBusyTimeout(t *testing.T) {
	db, err := sqlstate.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"), sqlstate.Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(context.Background(), "test", `CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	var inner error
	if err := db.Tx(context.Background(), func(tx *sql.Tx) error {
		inner = db.Tx(context.Background(), put("inner", 1))
		return put("outer", 2)(tx)
	}); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(inner, sqlstate.ErrBusy) {
		t.Fatalf("nested Tx: %v, want ErrBusy", inner)
	}
	if err := db.Tx(context.Background(), put("after", 3)); err != nil {
		t.Fatalf("the queue stalled after a call left it: %v", err)
	}
	if got := keys(t, db); len(got) != 2 || got["outer"] != 2 || got["after"] != 3 {
		t.Fatalf("rows %v", got)
	}
}

// Write and WriteRow run one statement, prepared or not, as a queued write transaction.
func TestWriteAndWriteRow(t *testing.T) {
	db := kvTable(t)
	ctx := context.Background()
	if err := db.Prepare(ctx, `UPDATE kv SET v = v + 1 WHERE k = ? RETURNING v`); err != nil {
		t.Fatal(err)
	}
	if res, err := db.Write(ctx, `INSERT INTO kv (k, v) VALUES (?, ?)`, "a", 1); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%d rows affected", n)
	}
	var v int
	if err := db.WriteRow(ctx, `UPDATE kv SET v = v + 1 WHERE k = ? RETURNING v`, []any{"a"}, &v); err != nil || v != 2 {
		t.Fatalf("WriteRow: %d, %v", v, err)
	}
	if err := db.WriteRow(ctx, `UPDATE kv SET v = v + 1 WHERE k = ? RETURNING v`, []any{"missing"}, &v); !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("WriteRow of no row: %v, want sql.ErrNoRows", err)
	}
}

// A fn that panics: its caller panics with the value, its writes are undone, the other calls of
// its batch commit, and the queue goes on.
func TestPanicInATransactionFailsOnlyItsCaller(t *testing.T) {
	db := kvTable(t)
	release, wait := held(t, db)
	fns := []func(tx *sql.Tx) error{
		put("a", 1),
		func(tx *sql.Tx) error {
			if err := put("b", 2)(tx); err != nil {
				return err
			}
			panic("boom")
		},
		put("c", 3),
	}
	res := make([]chan any, len(fns))
	for i, fn := range fns {
		res[i] = make(chan any, 1)
		go func() {
			defer func() { res[i] <- recover() }()
			if err := db.Tx(context.Background(), fn); err != nil {
				res[i] <- err
			}
		}()
		sqlstate.WaitQueued(t, db, i+1)
	}
	release()
	wait()
	for i, r := range res {
		got := <-r
		if (i == 1) != (got == "boom") || (i != 1 && got != nil) {
			t.Fatalf("call %d: %v", i, got)
		}
	}
	if err := db.Tx(context.Background(), put("after", 4)); err != nil {
		t.Fatalf("the queue stopped after a panic: %v", err)
	}
	if got := keys(t, db); len(got) != 4 || got["b"] != 0 || got["a"] != 1 || got["c"] != 3 || got["after"] != 4 {
		t.Fatalf("rows %v: want held, a, c and after; b undone", got)
	}
}
