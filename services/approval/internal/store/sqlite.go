//go:build !serveronly

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// SQLite is the event store on an SQLite file, for the single-machine embedded default.
// One connection serialises writers, which is what SQLite does anyway.
type SQLite struct {
	db     *sql.DB
	keys   *domain.Keyring
	legacy int64
}

var _ app.Store = (*SQLite)(nil)

// OpenSQLite opens (creating when needed) the database file and applies migrations.
func OpenSQLite(ctx context.Context, path string, opts ...Option) (*SQLite, error) {
	o := collect(opts)
	if o.keys == nil && !o.readOnly {
		return nil, errors.New("sqlite: no audit key")
	}
	if o.readOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
	}
	if dir := filepath.Dir(path); dir != "." && path != ":memory:" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("sqlite: create %s: %w", dir, err)
		}
	}
	// The audit log is the truth (a switch-off of Auto-Approve included): every commit is on
	// disk before it is answered, power loss included.
	db, err := sql.Open("sqlite", sqlstate.DSN(path, sqlstate.SyncFull, 5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(sqlstate.ConnMaxIdle)
	s := &SQLite{db: db, keys: o.keys}
	if !o.readOnly {
		err = s.Migrate(ctx)
	}
	if err == nil {
		err = db.QueryRowContext(ctx, `SELECT COALESCE(max(max_event_id), 0) FROM approval_audit_legacy`).Scan(&s.legacy)
	}
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

// Ping checks the database (readiness).
func (s *SQLite) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// DB exposes the handle to tests that need to reach under the store.
func (s *SQLite) DB() *sql.DB { return s.db }

// Migrate applies pending migrations in one transaction.
func (s *SQLite) Migrate(ctx context.Context) error {
	ms, err := migrations("sqlite")
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS approval_schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		for _, m := range ms {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM approval_schema_migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
				return fmt.Errorf("migrate %s: %w", m.name, err)
			}
			if n > 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("migrate %s: %w", m.name, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO approval_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, time.Now().UnixMicro()); err != nil {
				return fmt.Errorf("migrate %s: %w", m.name, err)
			}
		}
		return nil
	})
}

func (s *SQLite) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

const sqliteJobColumns = `data, status, patch, content_hash, version, last_hash`

type scanner interface{ Scan(...any) error }

func scanSQLiteJob(r scanner) (domain.Job, error) {
	var (
		data                          string
		status, patch, hash, lastHash string
		version                       int64
	)
	if err := r.Scan(&data, &status, &patch, &hash, &version, &lastHash); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return domain.Job{}, domain.ErrNotFound
		}
		return domain.Job{}, err
	}
	return fromRow([]byte(data), status, patch, hash, version, lastHash)
}

func micros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

const sqliteReadModelColumns = sqliteJobColumns + `, approver, auto_approved`

func scanSQLiteReadModel(r scanner) (domain.ReadModel, error) {
	var (
		data                          string
		status, patch, hash, lastHash string
		version                       int64
		rm                            domain.ReadModel
	)
	if err := r.Scan(&data, &status, &patch, &hash, &version, &lastHash, &rm.Approver, &rm.AutoApproved); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return rm, domain.ErrNotFound
		}
		return rm, err
	}
	j, err := fromRow([]byte(data), status, patch, hash, version, lastHash)
	rm.Job = j
	return rm, err
}

// Create inserts the job and its first events.
func (s *SQLite) Create(ctx context.Context, id string, drafts []domain.Draft) (domain.Job, error) {
	job, events, err := sealAll(s.keys, id, domain.Job{}, drafts)
	if err != nil {
		return domain.Job{}, err
	}
	r, err := toRow(job)
	if err != nil {
		return domain.Job{}, err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO approval_jobs (job_id, status, session_id, channel, route, task_type, plan, patch,
			content_hash, risk, cost, uses_browser, auto_approved, policy_rule, approver, requested_at, decided_at, expires_at,
			executed_at, finished_at, result, version, last_hash, data)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (job_id) DO NOTHING`,
			job.ID, string(job.Status), job.SessionID, job.Channel, job.Route, job.TaskType, job.Plan, job.Patch,
			job.ContentHash, string(r.risk), string(r.cost), job.UsesBrowser, job.AutoApproved, job.PolicyRule, r.approver,
			job.RequestedAt.UnixMicro(), micros(r.decided), micros(r.expires), micros(r.executed), micros(r.finished),
			nullJSON(r.result), job.Version, job.LastHash, string(r.data))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("create %s: %w: job exists", id, domain.ErrConflict)
		}
		return insertSQLiteEvents(ctx, tx, events)
	})
	if isSQLiteConstraint(err) {
		return domain.Job{}, fmt.Errorf("create %s: %w: job exists", id, domain.ErrConflict)
	}
	if err != nil {
		return domain.Job{}, err
	}
	return job, nil
}

// Update runs fn on the current job and records its events and the new read model in one
// immediate transaction, guarded by the version check and the unique (job_id, seq) key.
func (s *SQLite) Update(ctx context.Context, id string, fn func(domain.Job) ([]domain.Draft, error)) (domain.Job, error) {
	return s.UpdateReading(ctx, id, "", reading(fn))
}

// UpdateReading is Update with stream (a stream that is not a job) readable in the same
// transaction. The store's one connection runs one transaction at a time, so an Append to the
// stream happens wholly before or after it.
func (s *SQLite) UpdateReading(ctx context.Context, id, stream string, fn func(domain.Job, app.StreamReader) ([]domain.Draft, error)) (domain.Job, error) {
	return retryOnVersionConflict(func() (domain.Job, error) { return s.update(ctx, id, stream, fn) })
}

func (s *SQLite) update(ctx context.Context, id, stream string, fn func(domain.Job, app.StreamReader) ([]domain.Draft, error)) (domain.Job, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return domain.Job{}, err
	}
	defer func() { _ = tx.Rollback() }()
	return update(ctx, s.keys, sqliteUpdate{s: s, tx: tx}, id, stream, fn)
}

// sqliteUpdate is Update's transaction on SQLite (one writer at a time: no row lock needed).
type sqliteUpdate struct {
	s  *SQLite
	tx *sql.Tx
}

// lockStream has nothing to take: the transaction is the store's one connection's only one.
func (u sqliteUpdate) lockStream(context.Context, string) error { return nil }

func (u sqliteUpdate) lastEvent(ctx context.Context, stream string, types []domain.EventType) (*domain.Event, error) {
	return u.s.lastEvent(ctx, u.tx, stream, types)
}

func (u sqliteUpdate) lockedReadModel(ctx context.Context, id string) (domain.ReadModel, error) {
	return scanSQLiteReadModel(u.tx.QueryRowContext(ctx, `SELECT `+sqliteReadModelColumns+` FROM approval_jobs WHERE job_id = ?`, id))
}

func (u sqliteUpdate) events(ctx context.Context, id string) ([]domain.Event, error) {
	return u.s.events(ctx, u.tx, id)
}

func (u sqliteUpdate) insertEvents(ctx context.Context, events []domain.Event) error {
	if err := insertSQLiteEvents(ctx, u.tx, events); err != nil {
		if isSQLiteConstraint(err) {
			return domain.ErrVersionConflict
		}
		return err
	}
	return nil
}

func (u sqliteUpdate) writeRow(ctx context.Context, id string, next domain.Job, r row, prev int64) error {
	res, err := u.tx.ExecContext(ctx, `UPDATE approval_jobs SET status=?, patch=?, content_hash=?, auto_approved=?, policy_rule=?,
		approver=?, decided_at=?, expires_at=?, executed_at=?, finished_at=?, result=?, version=?, last_hash=?, data=?, uses_browser=?
		WHERE job_id=? AND version=?`,
		string(next.Status), next.Patch, next.ContentHash, next.AutoApproved, next.PolicyRule, r.approver, micros(r.decided),
		micros(r.expires), micros(r.executed), micros(r.finished), nullJSON(r.result), next.Version, next.LastHash,
		string(r.data), next.UsesBrowser, id, prev)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return domain.ErrVersionConflict
	}
	return nil
}

func (u sqliteUpdate) commit(context.Context) error { return u.tx.Commit() }

func insertSQLiteEvents(ctx context.Context, tx *sql.Tx, events []domain.Event) error {
	for _, e := range events {
		if _, err := tx.ExecContext(ctx, `INSERT INTO approval_events (job_id, seq, type, actor_id, actor_channel, actor_name,
			channel, payload, policy_rule, prev_hash, hash, key_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			e.JobID, e.Seq, string(e.Type), e.Actor.ID, e.Actor.Channel, e.Actor.DisplayName, e.Channel, string(e.Payload),
			e.PolicyRule, e.PrevHash, e.Hash, e.KeyID, e.At.UnixMicro()); err != nil {
			return err
		}
	}
	return nil
}

// Append records events on a non-job stream.
func (s *SQLite) Append(ctx context.Context, stream string, drafts []domain.Draft) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var last domain.Job
		err := tx.QueryRowContext(ctx, `SELECT seq, hash FROM approval_events WHERE job_id = ? ORDER BY seq DESC LIMIT 1`, stream).
			Scan(&last.Version, &last.LastHash)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		_, events, err := sealAll(s.keys, stream, last, drafts)
		if err != nil {
			return err
		}
		return insertSQLiteEvents(ctx, tx, events)
	})
}

// Get reads the job's read model.
func (s *SQLite) Get(ctx context.Context, id string) (domain.Job, error) {
	j, err := scanSQLiteJob(s.db.QueryRowContext(ctx, `SELECT `+sqliteJobColumns+` FROM approval_jobs WHERE job_id = ?`, id))
	if errors.Is(err, domain.ErrNotFound) {
		return j, fmt.Errorf("job %s: %w", id, domain.ErrNotFound)
	}
	return j, err
}

// List returns jobs newest first.
func (s *SQLite) List(ctx context.Context, f app.ListFilter) ([]domain.Job, error) {
	var (
		where []string
		args  []any
	)
	if len(f.Statuses) > 0 {
		marks := strings.TrimSuffix(strings.Repeat("?,", len(f.Statuses)), ",")
		where = append(where, "status IN ("+marks+")")
		for _, st := range f.Statuses {
			args = append(args, string(st))
		}
	}
	if f.SessionID != "" {
		where = append(where, "session_id = ?")
		args = append(args, f.SessionID)
	}
	if !f.ExpiresBefore.IsZero() {
		where = append(where, "expires_at <= ?")
		args = append(args, f.ExpiresBefore.UnixMicro())
	}
	q := `SELECT ` + sqliteJobColumns + ` FROM approval_jobs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY requested_at DESC, job_id DESC LIMIT ? OFFSET ?"
	args = append(args, f.Limit, f.Offset)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []domain.Job
	for rows.Next() {
		j, err := scanSQLiteJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// Events returns a stream's events in order.
func (s *SQLite) Events(ctx context.Context, id string) ([]domain.Event, error) {
	return s.events(ctx, s.db, id)
}

type sqliteQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// JobIDsOfDay lists the ids of the jobs whose id starts with job_<day>_.
func (s *SQLite) JobIDsOfDay(ctx context.Context, day string) ([]string, error) {
	return s.strings(ctx, `SELECT job_id FROM approval_jobs WHERE job_id LIKE ?`, "job_"+day+"_%")
}

// strings runs a query of one text column and returns its values.
func (s *SQLite) strings(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// LastEvent returns the newest event of stream whose type is one of types (nil when none).
func (s *SQLite) LastEvent(ctx context.Context, stream string, types ...domain.EventType) (*domain.Event, error) {
	return s.lastEvent(ctx, s.db, stream, types)
}

func (s *SQLite) lastEvent(ctx context.Context, q sqliteQuerier, stream string, types []domain.EventType) (*domain.Event, error) {
	args := []any{stream}
	marks := make([]string, len(types))
	for i, t := range types {
		args, marks[i] = append(args, string(t)), "?"
	}
	evs, err := s.eventsWhere(ctx, q, `job_id = ? AND type IN (`+strings.Join(marks, ", ")+`) ORDER BY seq DESC LIMIT 1`, args...)
	if err != nil || len(evs) == 0 {
		return nil, err
	}
	return &evs[0], nil
}

// AcquireLease implements app.Leases (see Postgres.AcquireLease).
func (s *SQLite) AcquireLease(ctx context.Context, name, holder string, now, until time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO approval_leases (name, holder, expires_at) VALUES (?1, ?2, ?4)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE approval_leases.holder = excluded.holder OR approval_leases.expires_at <= ?3`,
		name, holder, now.UnixMicro(), until.UnixMicro())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ReleaseLease implements app.Leases.
func (s *SQLite) ReleaseLease(ctx context.Context, name, holder string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM approval_leases WHERE name = ? AND holder = ?`, name, holder)
	return err
}

func (s *SQLite) events(ctx context.Context, q sqliteQuerier, id string) ([]domain.Event, error) {
	return s.eventsWhere(ctx, q, `job_id = ? ORDER BY seq`, id)
}

func (s *SQLite) eventsWhere(ctx context.Context, q sqliteQuerier, where string, args ...any) ([]domain.Event, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, job_id, seq, type, actor_id, actor_channel, actor_name, channel, payload,
		policy_rule, prev_hash, hash, key_id, created_at FROM approval_events WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []domain.Event
	for rows.Next() {
		var (
			e         domain.Event
			typ       string
			payload   string
			rowID, at int64
		)
		if err := rows.Scan(&rowID, &e.JobID, &e.Seq, &typ, &e.Actor.ID, &e.Actor.Channel, &e.Actor.DisplayName, &e.Channel, &payload,
			&e.PolicyRule, &e.PrevHash, &e.Hash, &e.KeyID, &at); err != nil {
			return nil, err
		}
		e.Type, e.Payload, e.At = domain.EventType(typ), []byte(payload), time.UnixMicro(at).UTC()
		e.Legacy = e.KeyID == "" && rowID <= s.legacy
		out = append(out, e)
	}
	return out, rows.Err()
}

// StreamIDs lists every id with events or a job row, sorted.
func (s *SQLite) StreamIDs(ctx context.Context) ([]string, error) {
	return s.strings(ctx, `SELECT job_id FROM approval_jobs UNION SELECT job_id FROM approval_events ORDER BY 1`)
}

// AuditRead returns a stream's row (nil when there is none) and its events from one snapshot.
func (s *SQLite) AuditRead(ctx context.Context, id string) (*domain.ReadModel, []domain.Event, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = tx.Rollback() }()
	var rm *domain.ReadModel
	r, err := scanSQLiteReadModel(tx.QueryRowContext(ctx, `SELECT `+sqliteReadModelColumns+` FROM approval_jobs WHERE job_id = ?`, id))
	switch {
	case err == nil:
		rm = &r
	case !errors.Is(err, domain.ErrNotFound):
		return nil, nil, err
	}
	evs, err := s.events(ctx, tx, id)
	return rm, evs, err
}

func isSQLiteConstraint(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		code := se.Code()
		return code&0xff == sqlite3.SQLITE_CONSTRAINT
	}
	return false
}
