package sqlstate_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
)

func open(t *testing.T, path string) *sqlstate.DB {
	t.Helper()
	db, err := sqlstate.Open(context.Background(), path, sqlstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestOpenSharesOneHandlePerPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, b := open(t, path), open(t, path)
	if a != b {
		t.Fatal("two handles for one path in one process")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.PingContext(context.Background()); err != nil {
		t.Fatalf("the first Close closed the shared handle: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	c := open(t, path)
	defer c.Close()
	if c == a {
		t.Fatal("a closed handle was handed out again")
	}
}

func TestMigrateRunsEachStepOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db := open(t, path)
	steps := []string{`CREATE TABLE t (k TEXT PRIMARY KEY, expires_at INTEGER NOT NULL DEFAULT 0)`}
	if err := db.Migrate(ctx, "test", steps...); err != nil {
		t.Fatal(err)
	}
	steps = append(steps, `ALTER TABLE t ADD COLUMN v TEXT`)
	if err := db.Migrate(ctx, "test", steps...); err != nil {
		t.Fatalf("second migration: %v", err)
	}
	db.Close()
	db = open(t, path)
	defer db.Close()
	if err := db.Migrate(ctx, "test", steps...); err != nil {
		t.Fatalf("migrating an up-to-date database ran a step again: %v", err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO t (k, v) VALUES ('a', 'b')`); err != nil {
		t.Fatal(err)
	}
}

func TestSweepDeletesOnlyExpiredRows(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer db.Close()
	if err := db.Migrate(ctx, "test", `CREATE TABLE t (k TEXT PRIMARY KEY, expires_at INTEGER NOT NULL DEFAULT 0)`); err != nil {
		t.Fatal(err)
	}
	db.Expire("t")
	for k, exp := range map[string]int64{"never": 0, "past": sqlstate.NowMS() - 1, "future": sqlstate.ExpiresAt(time.Hour)} {
		if _, err := db.ExecContext(ctx, `INSERT INTO t (k, expires_at) VALUES (?, ?)`, k, exp); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.Sweep(ctx)
	if err != nil || n != 1 {
		t.Fatalf("swept %d (%v), want 1", n, err)
	}
	var left int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM t WHERE k IN ('never', 'future')`).Scan(&left); err != nil || left != 2 {
		t.Fatalf("left %d (%v), want never and future", left, err)
	}
}

func TestNotifyWakesWaiters(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer db.Close()
	w := db.Wait("q")
	select {
	case <-w:
		t.Fatal("woken before Notify")
	default:
	}
	db.Notify("other")
	select {
	case <-w:
		t.Fatal("woken by another topic")
	default:
	}
	db.Notify("q")
	<-w
	if db.Wait("q") == w {
		t.Fatal("a fired channel was handed out again")
	}
}

func TestOpenRefusesUnknownSync(t *testing.T) {
	if _, err := sqlstate.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), sqlstate.Options{Sync: "sometimes"}); err == nil {
		t.Fatal("unknown sync level accepted")
	}
}

func TestPrepareOnceAndUseInTx(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer db.Close()
	if err := db.Migrate(ctx, "test", `CREATE TABLE t (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	const q = `INSERT INTO t (k) VALUES (?)`
	if _, err := db.Stmt(q); err == nil {
		t.Fatal("a statement not prepared was handed out")
	}
	if err := db.Prepare(ctx, q, q); err != nil {
		t.Fatal(err)
	}
	ins, err := db.Stmt(q)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Prepare(ctx, q); err != nil {
		t.Fatal(err)
	}
	if again, err := db.Stmt(q); err != nil || again != ins {
		t.Fatalf("prepared twice: %p %p %v", ins, again, err)
	}
	// A transaction holding every connection of the pool still runs prepared statements.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if err := db.Tx(ctx, func(tx *sql.Tx) error {
				_, err := tx.StmtContext(ctx, ins).ExecContext(ctx, fmt.Sprint(i))
				return err
			}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := db.Prepare(ctx, `SELECT nothing FROM nowhere`); err == nil {
		t.Fatal("a broken statement was prepared")
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 8 {
		t.Fatalf("rows %d (%v), want the 8 inserted in transactions", n, err)
	}
}

// Services of one process migrate a shared component (the JobID counter) at the same time.
func TestConcurrentMigrateOfOneComponent(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer db.Close()
	steps := []string{`CREATE TABLE t (k TEXT PRIMARY KEY)`, `ALTER TABLE t ADD COLUMN v TEXT`}
	errs := make(chan error, 8)
	for range 8 {
		go func() { errs <- db.Migrate(ctx, "shared", steps...) }()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent migration: %v", err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO t (k, v) VALUES ('a', 'b')`); err != nil {
		t.Fatal(err)
	}
}

// Connections left unused for ConnMaxIdle are closed (with their page caches); the next
// statement opens one again and sees the data.
func TestIdleConnectionsAreClosed(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstate.Open(ctx, filepath.Join(t.TempDir(), "state.db"), sqlstate.Options{ConnMaxIdle: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (v INTEGER)`); err != nil {
		t.Fatal(err)
	}
	// The pool's one connection, held and given back, is left idle.
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for db.Stats().Idle != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("idle connections still open: %+v", db.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := db.Stats(); st.MaxIdleTimeClosed < 1 {
		t.Fatalf("closed for idleness: %d, want 1", st.MaxIdleTimeClosed)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("after the idle close: %d rows, %v", n, err)
	}
}

// pragmaInAndOutsideATransaction reads a pragma in a write transaction and then outside one,
// on a connection the pool opened again after it had closed the first for idleness: the
// settings are those of every connection, not of one.
func pragmaInAndOutsideATransaction(t *testing.T, pragma string) (inTx, outside int) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstate.Open(ctx, filepath.Join(t.TempDir(), "state.db"), sqlstate.Options{ConnMaxIdle: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Tx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `PRAGMA `+pragma).Scan(&inTx)
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for db.Stats().MaxIdleTimeClosed == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the idle connection is still open: %+v", db.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := db.QueryRowContext(ctx, `PRAGMA `+pragma).Scan(&outside); err != nil {
		t.Fatal(err)
	}
	return inTx, outside
}

// The pool has one connection, which reads and writes take in turn (maxConns): a second one
// would discard its page cache at nearly every read.
func TestOneConnection(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "state.db"))
	defer db.Close()
	if n := db.Stats().MaxOpenConnections; n != 1 {
		t.Fatalf("pool of %d connections, want 1", n)
	}
}

func TestConnectionsKeepTemporaryFilesInMemory(t *testing.T) {
	if inTx, outside := pragmaInAndOutsideATransaction(t, "temp_store"); inTx != 2 || outside != 2 {
		t.Errorf("temp_store = %d in the transaction, %d outside it; want 2 (MEMORY)", inTx, outside)
	}
}

// Every connection checkpoints the write-ahead log once it holds sqlstate.WALCheckpointPages pages.
func TestConnectionsCheckpointASmallLog(t *testing.T) {
	want := sqlstate.WALCheckpointPages
	if inTx, outside := pragmaInAndOutsideATransaction(t, "wal_autocheckpoint"); inTx != want || outside != want {
		t.Errorf("wal_autocheckpoint = %d in the transaction, %d outside it; want %d", inTx, outside, want)
	}
}

// A commit changes the mark, by this handle or by another connection to the file (another
// process); no commit, no change.
func TestMarkChangesWithACommit(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db := open(t, path)
	defer db.Close()
	if err := db.Migrate(ctx, "test", `CREATE TABLE t (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	m0 := db.Mark()
	if again := db.Mark(); again != m0 {
		t.Fatalf("mark moved without a commit: %+v, %+v", m0, again)
	}
	if _, err := db.Write(ctx, `INSERT INTO t (k) VALUES ('a')`); err != nil {
		t.Fatal(err)
	}
	m1 := db.Mark()
	if m1 == m0 {
		t.Fatal("a commit left the mark as it was")
	}
	other, err := sql.Open("sqlite", sqlstate.DSN(path, sqlstate.SyncNormal, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(ctx, `INSERT INTO t (k) VALUES ('b')`); err != nil {
		t.Fatal(err)
	}
	m2 := db.Mark()
	if m2 == m1 {
		t.Fatal("another connection's commit left the mark as it was")
	}
	if ago := time.Since(m2.Changed()); ago < 0 || ago > time.Minute {
		t.Fatalf("changed %v ago by the mark, right after a commit", ago)
	}
	// A commit into a log cut back to nothing by a checkpoint.
	if _, err := other.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	m3 := db.Mark()
	if _, err := other.ExecContext(ctx, `INSERT INTO t (k) VALUES ('c')`); err != nil {
		t.Fatal(err)
	}
	if db.Mark() == m3 {
		t.Fatal("a commit after a checkpoint left the mark as it was")
	}
}

// Closing the database while a read waits for the connection that a write transaction holds,
// and that transaction looks up a prepared statement, ends: the close does not hold the
// statements' lock while it waits for the read, the read waits for the transaction, and the
// transaction does not wait for the close.
func TestCloseWhileAReadWaitsForTheWriter(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "state.db"))
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (v INTEGER)`); err != nil {
		t.Fatal(err)
	}
	const q = `SELECT count(*) FROM t`
	if err := db.Prepare(ctx, q); err != nil {
		t.Fatal(err)
	}
	st, err := db.Stmt(q)
	if err != nil {
		t.Fatal(err)
	}
	holding, lookUp := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = db.Tx(ctx, func(tx *sql.Tx) error {
			close(holding)
			<-lookUp
			_, _ = db.Stmt(q) // prepared, or gone once the close has begun: either way an answer
			_, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (1)`)
			return err
		})
	})
	<-holding
	wg.Go(func() {
		var n int
		_ = st.QueryRowContext(ctx).Scan(&n) // waits for the transaction's connection
	})
	time.Sleep(100 * time.Millisecond) // the read is waiting
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	time.Sleep(100 * time.Millisecond) // the close has begun
	close(lookUp)
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the close, the read and the write transaction wait for each other")
	}
	wg.Wait()
}
