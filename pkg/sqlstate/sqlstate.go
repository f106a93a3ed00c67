// Package sqlstate is the embedded engine for the state that Redis holds in a distributed
// deployment (sessions, short memory, dedupe keys, queues, JobID counters, the Auto-Approve
// grant, reply caches): one SQLite file in WAL mode, durable at every commit, with expiry
// swept by the engine instead of a snapshot loop.
//
// Every service of the embedded suite opens the same path and shares one handle (Open counts
// references), so the file has a single writer connection pool and the in-process wake-up
// (Notify/Wait) reaches every consumer. Each store owns its tables and migrates them with
// Migrate; a table with an expires_at column (Unix milliseconds, 0 = never) registers it with
// Expire and the sweeper deletes what has expired.
package sqlstate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/picoclaw-suite/picoclaw/pkg/runner"
)

// Sync is the durability level of a commit.
type Sync string

const (
	// SyncNormal survives a crash or SIGKILL of the process at any moment (the WAL is in the
	// operating system's hands when a commit returns); a power loss may lose the last commits.
	SyncNormal Sync = "normal"
	// SyncFull also survives a power loss (fsync at every commit).
	SyncFull Sync = "full"
)

// Options configure a database.
type Options struct {
	// Sync defaults to SyncNormal.
	Sync Sync
	// SweepEvery is how often expired rows are deleted (default 30 s).
	SweepEvery time.Duration
	// BusyTimeout is how long a statement waits for another connection's write lock before it
	// fails with "database is locked" (default 10 s).
	BusyTimeout time.Duration
	// ConnMaxIdle is how long a connection stays open unused (default ConnMaxIdle).
	ConnMaxIdle time.Duration
	// Logger reports sweeper errors.
	Logger *slog.Logger
}

// DB is one shared state database.
type DB struct {
	*sql.DB
	path string
	// real is path with its symbolic links resolved, as SQLite names the write-ahead log.
	real string
	opts Options

	writer writer

	mu      sync.Mutex
	refs    int
	expiry  map[string]bool // table → registered
	waiters map[string]chan struct{}
	stmts   map[string]*sql.Stmt
	stop    context.CancelFunc
	swept   chan struct{}
}

var (
	openMu sync.Mutex
	open   = map[string]*DB{}
)

// Open opens (creating when needed) the state database at path, or returns the handle already
// open in this process. Close it once per Open.
func Open(ctx context.Context, path string, o Options) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("state database %s: %w", path, err)
	}
	openMu.Lock()
	defer openMu.Unlock()
	if db := open[abs]; db != nil {
		db.mu.Lock()
		db.refs++
		db.mu.Unlock()
		return db, nil
	}
	if o.Sync == "" {
		o.Sync = SyncNormal
	}
	if o.Sync != SyncNormal && o.Sync != SyncFull {
		return nil, fmt.Errorf("state database: sync must be normal or full, got %q", o.Sync)
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 10 * time.Second
	}
	if o.ConnMaxIdle <= 0 {
		o.ConnMaxIdle = ConnMaxIdle
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("state database: create %s: %w", filepath.Dir(abs), err)
	}
	sdb, err := sql.Open("sqlite", DSN(abs, o.Sync, o.BusyTimeout))
	if err != nil {
		return nil, fmt.Errorf("state database: open %s: %w", abs, err)
	}
	// One connection for reads and writes alike (see maxConns).
	sdb.SetMaxOpenConns(maxConns)
	sdb.SetMaxIdleConns(maxConns)
	sdb.SetConnMaxIdleTime(o.ConnMaxIdle)
	if err := sdb.PingContext(ctx); err != nil {
		_ = sdb.Close()
		return nil, fmt.Errorf("state database: open %s: %w", abs, err)
	}
	if _, err := sdb.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS sqlstate_migrations (
		component TEXT PRIMARY KEY, version INTEGER NOT NULL)`); err != nil {
		_ = sdb.Close()
		return nil, fmt.Errorf("state database: %w", err)
	}
	_ = os.Chmod(abs, 0o600)
	sctx, stop := context.WithCancel(context.Background())
	real := abs
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		real = r
	}
	db := &DB{DB: sdb, path: abs, real: real, opts: o, refs: 1, expiry: map[string]bool{}, waiters: map[string]chan struct{}{},
		stmts: map[string]*sql.Stmt{}, stop: stop, swept: make(chan struct{})}
	go db.sweeper(sctx)
	open[abs] = db
	return db, nil
}

// maxConns is the size of a state database's connection pool: one connection, which reads and
// writes take in turn. In WAL mode a connection discards its whole page cache when it begins a
// read after another connection has committed, so with two connections nearly every read began
// by fetching its pages again (a system call and a copy each) from the log or the file; with
// one, the cache holds what the last statements touched. Embedded, 8 interleaved rounds against
// two connections (both with a 32 MiB memory limit): CPU per message 0.93x, messages per second
// 1.05x (higher in 8 of 8). A write transaction's function must therefore work only through its
// transaction: a read of the pool inside it would wait for the connection the transaction holds.
const maxConns = 1

// ConnMaxIdle is how long a SQLite connection stays open unused: each holds a page cache of up
// to 512 KiB, its prepared statements and a copy of the schema outside the Go heap, so an idle
// suite closes them; under traffic they are reused long before (the next statement after a quiet
// spell opens one again and prepares its statements on it).
const ConnMaxIdle = 15 * time.Second

// DSN is the data source name of the suite's SQLite files: WAL (checkpointed every
// walCheckpointPages pages, its file cut back to 4 MB after each checkpoint), the given durability, foreign keys on, temporary files in memory, writers waiting up to busy for each other, write transactions taking the lock at
// their start.
func DSN(path string, sync Sync, busy time.Duration) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	// After a checkpoint the write-ahead log is cut back to this size rather than kept at its
	// largest, so the directory's size follows the state, not the busiest minute.
	q.Add("_pragma", "journal_size_limit(4194304)")
	// The log is folded back into the database once it holds walCheckpointPages pages.
	q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walCheckpointPages))
	q.Add("_pragma", "synchronous("+string(sync)+")")
	q.Add("_pragma", "foreign_keys(1)")
	// Each connection's page cache is bounded to 512 KiB (SQLite's default is 2 MB): the state
	// is small and hot, and the operating system's file cache serves the rest.
	q.Add("_pragma", "cache_size(-256)")
	// Temporary files stay in memory: a write batch runs each transaction in its own savepoint,
	// whose page images (the statement journal) spilled to a new file under /var/tmp once a batch
	// touched more than 16 pages — an open, dozens of writes and a close per batch.
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// walCheckpointPages is when a commit checkpoints the write-ahead log (SQLite's default is 1,000
// pages). Each page read looks the page up in the log first, and under a burst a smaller log
// costs less in lookups than the more frequent checkpoints cost in copies: embedded, 10
// interleaved rounds, CPU per message 0.94-0.96x at 300 pages and 1.05x at 4,000.
const walCheckpointPages = 300

// Path is the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close releases one reference; the last one stops the sweeper and closes the file.
func (db *DB) Close() error {
	openMu.Lock()
	defer openMu.Unlock()
	db.mu.Lock()
	db.refs--
	last := db.refs == 0
	db.mu.Unlock()
	if !last {
		return nil
	}
	delete(open, db.path)
	db.stop()
	<-db.swept
	// The statements are closed outside db.mu: closing one waits for the reads still running on
	// it, and a read may be waiting for the connection of a write transaction that looks up
	// its own statements (Stmt) under db.mu.
	db.mu.Lock()
	stmts := db.stmts
	db.stmts = map[string]*sql.Stmt{}
	db.mu.Unlock()
	for _, st := range stmts {
		_ = st.Close()
	}
	// Fold the WAL back into the database so the directory holds one file at rest.
	_, _ = db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	return db.DB.Close()
}

// Migrate brings component's tables to len(steps): step i runs once, in order, each in its
// own transaction together with the version bump. Services of one process may migrate a shared
// component at the same time: each step's transaction reads the version again under the write
// lock and skips a step another caller has run.
func (db *DB) Migrate(ctx context.Context, component string, steps ...string) error {
	have, err := migrated(ctx, db, component)
	if err != nil {
		return fmt.Errorf("state database: migrate %s: %w", component, err)
	}
	for i := have; i < len(steps); i++ {
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			if now, err := migrated(ctx, tx, component); err != nil || now > i {
				return err
			}
			if _, err := tx.ExecContext(ctx, steps[i]); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO sqlstate_migrations (component, version) VALUES (?, ?)
				ON CONFLICT (component) DO UPDATE SET version = excluded.version`, component, i+1)
			return err
		})
		if err != nil {
			return fmt.Errorf("state database: migrate %s to %d: %w", component, i+1, err)
		}
	}
	return nil
}

// Prepare prepares queries once for the life of the database: parsing a statement costs more
// than running most of the stores' statements. Call it when a store is built, outside any
// transaction: preparing takes a connection of the pool, which a transaction holding one must
// never wait for.
func (db *DB) Prepare(ctx context.Context, queries ...string) error {
	for _, q := range queries {
		db.mu.Lock()
		done := db.stmts[q] != nil
		db.mu.Unlock()
		if done {
			continue
		}
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("state database: prepare %q: %w", q, err)
		}
		db.mu.Lock()
		if db.stmts[q] == nil {
			db.stmts[q] = st
		} else {
			_ = st.Close()
		}
		db.mu.Unlock()
	}
	return nil
}

// Stmt is query as Prepare prepared it; it takes no connection. In a transaction use
// tx.StmtContext(ctx, stmt), which reuses the preparation on the transaction's connection.
func (db *DB) Stmt(query string) (*sql.Stmt, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if st := db.stmts[query]; st != nil {
		return st, nil
	}
	return nil, fmt.Errorf("state database: statement not prepared: %q", query)
}

// migrated is component's version (0 before its first step).
func migrated(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}, component string) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, `SELECT version FROM sqlstate_migrations WHERE component = ?`, component).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return v, err
}

// Tx runs fn in a write transaction; what fn did is committed when fn returns nil (and Tx
// returns once it is), undone when fn returns an error (which Tx returns).
//
// Writers of one process take turns through one queue instead of through SQLite's lock, whose
// busy handler sleeps 1, 2, 5, 10 … ms between looks: the calls that arrive while one
// transaction runs are run next, together, in one transaction (group commit), each in its own
// savepoint, so one call's error undoes only its own writes. A commit is then one write of the
// changed pages and one sync for them all. fn must only work through tx and assign its results:
// when the shared transaction cannot be committed, the calls whose fn had succeeded are run
// again, each alone, so fn may run more than once (only the committed run has any effect).
func (db *DB) Tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.writer.do(ctx, db.DB, db.opts.BusyTimeout, fn)
}

// Expire registers table for the sweeper: its rows whose expires_at (Unix ms, 0 = never) has
// passed are deleted. Readers must still ignore expired rows between sweeps.
func (db *DB) Expire(table string) {
	db.mu.Lock()
	db.expiry[table] = true
	db.mu.Unlock()
}

// Sweep deletes every expired row now and returns how many went.
func (db *DB) Sweep(ctx context.Context) (int64, error) {
	db.mu.Lock()
	tables := make([]string, 0, len(db.expiry))
	for t := range db.expiry {
		tables = append(tables, t)
	}
	db.mu.Unlock()
	now := NowMS()
	var total int64
	for _, t := range tables {
		res, err := db.Write(ctx, `DELETE FROM `+t+` WHERE expires_at > 0 AND expires_at <= ?`, now)
		if err != nil {
			return total, fmt.Errorf("state database: sweep %s: %w", t, err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}

func (db *DB) sweeper(ctx context.Context) {
	defer close(db.swept)
	runner.Every(ctx, db.opts.SweepEvery, func() {
		if _, err := db.Sweep(ctx); err != nil && ctx.Err() == nil {
			db.opts.Logger.Warn("sqlstate.sweep_failed", slog.String("error", err.Error()))
		}
	})
}

// Notify wakes every Wait on topic (for example a queue that got an entry).
func (db *DB) Notify(topic string) {
	db.mu.Lock()
	if ch := db.waiters[topic]; ch != nil {
		close(ch)
		delete(db.waiters, topic)
	}
	db.mu.Unlock()
}

// Wait returns a channel closed at the next Notify of topic. Take it before looking for work,
// so a Notify between the look and the wait is not missed.
func (db *DB) Wait(topic string) <-chan struct{} {
	db.mu.Lock()
	defer db.mu.Unlock()
	ch := db.waiters[topic]
	if ch == nil {
		ch = make(chan struct{})
		db.waiters[topic] = ch
	}
	return ch
}

// Mark is a cheap sign of a change to the database by any process (two stat calls): the size
// and modification time of its file and of its write-ahead log. A commit writes the log, so a
// mark taken after a commit became visible differs from one taken before it began, except when
// a commit that restarts the log leaves it at the size it had within the file system's
// timestamp granularity. A commit's log is written before the commit is visible, so a mark taken
// in between already shows it. A reader that skips looking while the mark stays the same must
// therefore look again while Changed is recent, and now and then anyway. A missing file marks as
// missing; one that cannot be stat'ed counts as changed at every call.
type Mark struct {
	dbSize, dbMod, walSize, walMod int64
}

// Changed is when the database or its log last changed, as far as the mark tells (the zero
// time when both are missing).
func (m Mark) Changed() time.Time {
	if m.dbMod == 0 && m.walMod == 0 {
		return time.Time{}
	}
	return time.Unix(0, max(m.dbMod, m.walMod))
}

// Mark is the database's Mark now.
func (db *DB) Mark() Mark {
	var m Mark
	m.dbSize, m.dbMod = statMark(db.real)
	m.walSize, m.walMod = statMark(db.real + "-wal")
	return m
}

// statMark is path's size and modification time for a Mark.
func statMark(path string) (size, mod int64) {
	fi, err := os.Stat(path)
	switch {
	case err == nil:
		return fi.Size(), fi.ModTime().UnixNano()
	case errors.Is(err, fs.ErrNotExist):
		return -1, 0
	default:
		return -1, time.Now().UnixNano()
	}
}

// NowMS is the current time in Unix milliseconds, the unit of every expires_at column.
func NowMS() int64 { return time.Now().UnixMilli() }

// ExpiresAt is the expires_at value for a ttl from now (0 when ttl ≤ 0: never).
func ExpiresAt(ttl time.Duration) int64 {
	if ttl <= 0 {
		return 0
	}
	return time.Now().Add(ttl).UnixMilli()
}
