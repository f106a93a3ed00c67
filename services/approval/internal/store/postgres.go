//go:build !sqliteonly

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/lib/pq"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Postgres is the event store on Postgres.
type Postgres struct {
	db *sql.DB
	// pool runs statements on db (traced when the store is).
	pool   pgConn
	tr     trace.Tracer
	keys   *domain.Keyring
	legacy int64
	// alterable: the role the service runs as could change or remove events.
	alterable bool
}

var _ app.Store = (*Postgres)(nil)

// OpenPostgres connects, applies pending migrations and returns the store. With WithMigrateDSN
// the migrations (and the runtime role's privileges) go over that owner connection and the store
// then runs over dsn; otherwise dsn migrates too, and LogAlterable reports that its role owns the
// log.
func OpenPostgres(ctx context.Context, dsn string, opts ...Option) (*Postgres, error) {
	o := collect(opts)
	if o.keys == nil && !o.readOnly {
		return nil, errors.New("postgres: no audit key")
	}
	cfg, _, err := pgConfig(dsn)
	if err != nil {
		// The error text can contain the DSN and its password.
		return nil, errors.New("postgres: cannot parse the DSN (PICOCLAW_POSTGRES_DSN)")
	}
	db, err := pgOpen(dsn)
	if err != nil {
		return nil, errors.New("postgres: cannot parse the DSN (PICOCLAW_POSTGRES_DSN)")
	}
	var tr trace.Tracer
	if o.tracer != nil {
		tr = o.tracer.Tracer(instrumentation)
	}
	if o.migrateDSN != "" && !o.readOnly {
		role := o.role
		if role == "" {
			role = cfg.User
		}
		if err := migrateAsOwner(ctx, o.migrateDSN, role, tr); err != nil {
			_ = db.Close()
			return nil, err
		}
	}
	s := &Postgres{db: db, pool: pgConn{q: db, tr: tr}, tr: tr, keys: o.keys}
	if o.migrateDSN == "" && !o.readOnly {
		err = migratePostgres(ctx, db, tr, "")
	}
	if err == nil {
		err = s.inspect(ctx)
	}
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// migrateAsOwner migrates over the owner's connection and grants role its privileges.
func migrateAsOwner(ctx context.Context, dsn, role string, tr trace.Tracer) error {
	cfg, _, err := pgConfig(dsn)
	if err != nil {
		return errors.New("postgres: cannot parse the migration DSN (PICOCLAW_POSTGRES_MIGRATE_DSN)")
	}
	db, err := pgOpen(dsn)
	if err != nil {
		return errors.New("postgres: cannot parse the migration DSN (PICOCLAW_POSTGRES_MIGRATE_DSN)")
	}
	defer db.Close()
	// One connection, opened now, as the migration needs no more.
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("postgres: connect for migrations: %w", err)
	}
	if role == cfg.User {
		role = "" // one role for both: nothing to grant
	}
	return migratePostgres(ctx, db, tr, role)
}

// inspect checks the schema is migrated, reads the pre-key boundary and whether this
// connection's role could alter the log.
func (s *Postgres) inspect(ctx context.Context) error {
	ms, err := migrations("postgres")
	if err != nil {
		return err
	}
	var have int
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(max(version), 0) FROM approval_schema_migrations`).Scan(&have); err != nil {
		return fmt.Errorf("postgres: audit schema: %w (run the migrations)", err)
	}
	if want := ms[len(ms)-1].version; have < want {
		return fmt.Errorf("postgres: audit schema is at migration %d, this build needs %d (run the migrations)", have, want)
	}
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(max(max_event_id), 0) FROM approval_audit_legacy`).Scan(&s.legacy); err != nil {
		return fmt.Errorf("postgres: audit schema: %w", err)
	}
	err = s.pool.QueryRow(ctx, `SELECT has_table_privilege('approval_events', 'UPDATE')
		OR has_table_privilege('approval_events', 'DELETE') OR has_table_privilege('approval_events', 'TRUNCATE')
		OR pg_has_role((SELECT relowner FROM pg_class WHERE oid = 'approval_events'::regclass), 'USAGE')`).Scan(&s.alterable)
	if err != nil {
		return fmt.Errorf("postgres: audit privileges: %w", err)
	}
	return nil
}

// LogAlterable reports whether the store's own role could change or remove events (it owns the
// tables, is a superuser, or was granted UPDATE, DELETE or TRUNCATE).
func (s *Postgres) LogAlterable() bool { return s.alterable }

// Close releases the pool.
func (s *Postgres) Close() { _ = s.db.Close() }

// Ping checks the connection (readiness).
func (s *Postgres) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// DB exposes the pool to tests that need to reach under the store.
func (s *Postgres) DB() *sql.DB { return s.db }

// Migrate applies pending migrations over the store's own connection.
func (s *Postgres) Migrate(ctx context.Context) error { return migratePostgres(ctx, s.db, s.tr, "") }

// migratePostgres applies pending migrations in one transaction under an advisory lock, so
// several instances starting at once apply each migration exactly once; with a role, the same
// transaction grants it the runtime privileges.
func migratePostgres(ctx context.Context, db *sql.DB, tr trace.Tracer, role string) error {
	ms, err := migrations("postgres")
	if err != nil {
		return err
	}
	return pgInTx(ctx, db, tr, nil, func(tx *pgTx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('picoclaw.approval.migrate.' || current_schema(), 0))`); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS approval_schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		for _, m := range ms {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM approval_schema_migrations WHERE version = $1)`, m.version).Scan(&exists); err != nil {
				return fmt.Errorf("migrate %s: %w", m.name, err)
			}
			if exists {
				continue
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migrate %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO approval_schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return fmt.Errorf("migrate %s: %w", m.name, err)
			}
		}
		if role == "" {
			return nil
		}
		return grantRuntime(ctx, tx, role)
	})
}

// RuntimeGrants is the privilege set-up for role in schema, as the owner applies it.
func RuntimeGrants(schema, role string) (string, error) {
	b, err := fs.ReadFile(migrationFS, "roles/postgres_runtime.sql")
	if err != nil {
		return "", err
	}
	return strings.NewReplacer("{{schema}}", pgIdent(schema), "{{role}}", pgIdent(role)).Replace(string(b)), nil
}

func grantRuntime(ctx context.Context, tx *pgTx, role string) error {
	var schema string
	if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fmt.Errorf("grant %s: %w", role, err)
	}
	sql, err := RuntimeGrants(schema, role)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, sql); err != nil {
		if pe := pgError(err); pe != nil && pe.Code == "42704" {
			return fmt.Errorf("grant the audit role %q its privileges: the role does not exist; create it first (CREATE ROLE ... LOGIN): %w", role, err)
		}
		return fmt.Errorf("grant the audit role %q its privileges: %w", role, err)
	}
	return nil
}

const pgJobColumns = `data, status, patch, content_hash, version, last_hash`

func scanPGJob(r pgScanner) (domain.Job, error) {
	var (
		data                          []byte
		status, patch, hash, lastHash string
		version                       int64
	)
	if err := r.Scan(&data, &status, &patch, &hash, &version, &lastHash); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return domain.Job{}, domain.ErrNotFound
		}
		return domain.Job{}, err
	}
	return fromRow(data, status, patch, hash, version, lastHash)
}

const pgReadModelColumns = pgJobColumns + `, approver, auto_approved`

func scanPGReadModel(r pgScanner) (domain.ReadModel, error) {
	var (
		data                          []byte
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
	j, err := fromRow(data, status, patch, hash, version, lastHash)
	rm.Job = j
	return rm, err
}

// Create inserts the job and its first events.
func (s *Postgres) Create(ctx context.Context, id string, drafts []domain.Draft) (domain.Job, error) {
	job, events, err := sealAll(s.keys, id, domain.Job{}, drafts)
	if err != nil {
		return domain.Job{}, err
	}
	err = pgInTx(ctx, s.db, s.tr, nil, func(tx *pgTx) error {
		r, err := toRow(job)
		if err != nil {
			return err
		}
		n, err := tx.Exec(ctx, `INSERT INTO approval_jobs (job_id, status, session_id, channel, route, task_type, plan, patch,
			content_hash, risk, cost, uses_browser, auto_approved, policy_rule, approver, requested_at, decided_at, expires_at,
			executed_at, finished_at, result, version, last_hash, data)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24)
			ON CONFLICT (job_id) DO NOTHING`,
			job.ID, string(job.Status), job.SessionID, job.Channel, job.Route, job.TaskType, job.Plan, job.Patch,
			job.ContentHash, string(r.risk), string(r.cost), job.UsesBrowser, job.AutoApproved, job.PolicyRule, r.approver,
			job.RequestedAt, r.decided, r.expires, r.executed, r.finished, nullJSON(r.result), job.Version, job.LastHash, string(r.data))
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("create %s: %w: job exists", id, domain.ErrConflict)
		}
		return insertPGEvents(ctx, tx, events)
	})
	if isUniqueViolation(err) {
		return domain.Job{}, fmt.Errorf("create %s: %w: job exists", id, domain.ErrConflict)
	}
	if err != nil {
		return domain.Job{}, err
	}
	return job, nil
}

// Update runs fn on the current job and records its events and the new read model in one
// transaction. The row lock keeps racing writers from spinning; the version check and the
// unique (job_id, seq) key are the optimistic guard that makes a lost race impossible to commit.
func (s *Postgres) Update(ctx context.Context, id string, fn func(domain.Job) ([]domain.Draft, error)) (domain.Job, error) {
	return s.UpdateReading(ctx, id, "", reading(fn))
}

// UpdateReading is Update with stream (a stream that is not a job) readable in the same
// transaction, under the stream's advisory lock taken shared: an Append to the stream (which
// takes it exclusively) either committed before the read, and is seen, or waits until this
// transaction ended.
func (s *Postgres) UpdateReading(ctx context.Context, id, stream string, fn func(domain.Job, app.StreamReader) ([]domain.Draft, error)) (domain.Job, error) {
	return retryOnVersionConflict(func() (domain.Job, error) { return s.update(ctx, id, stream, fn) })
}

func (s *Postgres) update(ctx context.Context, id, stream string, fn func(domain.Job, app.StreamReader) ([]domain.Draft, error)) (domain.Job, error) {
	tx, err := pgBegin(ctx, s.db, s.tr, nil)
	if err != nil {
		return domain.Job{}, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	return update(ctx, s.keys, pgUpdate{s: s, tx: tx}, id, stream, fn)
}

// pgUpdate is Update's transaction on Postgres: the row is locked FOR UPDATE.
type pgUpdate struct {
	s  *Postgres
	tx *pgTx
}

func (u pgUpdate) lockStream(ctx context.Context, stream string) error {
	_, err := u.tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 1))`, streamLock(stream))
	return err
}

func (u pgUpdate) lastEvent(ctx context.Context, stream string, types []domain.EventType) (*domain.Event, error) {
	return u.s.lastEvent(ctx, u.tx.pgConn, stream, types)
}

func (u pgUpdate) lockedReadModel(ctx context.Context, id string) (domain.ReadModel, error) {
	return scanPGReadModel(u.tx.QueryRow(ctx, `SELECT `+pgReadModelColumns+` FROM approval_jobs WHERE job_id = $1 FOR UPDATE`, id))
}

func (u pgUpdate) events(ctx context.Context, id string) ([]domain.Event, error) {
	return u.s.events(ctx, u.tx.pgConn, id)
}

func (u pgUpdate) insertEvents(ctx context.Context, events []domain.Event) error {
	if err := insertPGEvents(ctx, u.tx, events); err != nil {
		if isUniqueViolation(err) {
			return domain.ErrVersionConflict
		}
		return err
	}
	return nil
}

func (u pgUpdate) writeRow(ctx context.Context, id string, next domain.Job, r row, prev int64) error {
	n, err := u.tx.Exec(ctx, `UPDATE approval_jobs SET status=$2, patch=$3, content_hash=$4, auto_approved=$5, policy_rule=$6,
		approver=$7, decided_at=$8, expires_at=$9, executed_at=$10, finished_at=$11, result=$12, version=$13, last_hash=$14,
		data=$15, uses_browser=$16 WHERE job_id=$1 AND version=$17`,
		id, string(next.Status), next.Patch, next.ContentHash, next.AutoApproved, next.PolicyRule, r.approver, r.decided,
		r.expires, r.executed, r.finished, nullJSON(r.result), next.Version, next.LastHash, string(r.data), next.UsesBrowser, prev)
	if err != nil {
		return err
	}
	if n != 1 {
		return domain.ErrVersionConflict
	}
	return nil
}

func (u pgUpdate) commit(ctx context.Context) error {
	if err := u.tx.Commit(ctx); err != nil {
		if isUniqueViolation(err) {
			return domain.ErrVersionConflict
		}
		return err
	}
	return nil
}

func insertPGEvents(ctx context.Context, tx *pgTx, events []domain.Event) error {
	for _, e := range events {
		if _, err := tx.Exec(ctx, `INSERT INTO approval_events (job_id, seq, type, actor_id, actor_channel, actor_name, channel,
			payload, policy_rule, prev_hash, hash, key_id, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13)`,
			e.JobID, e.Seq, string(e.Type), e.Actor.ID, e.Actor.Channel, e.Actor.DisplayName, e.Channel, string(e.Payload),
			e.PolicyRule, e.PrevHash, e.Hash, e.KeyID, e.At); err != nil {
			return err
		}
	}
	return nil
}

// Append records events on a non-job stream, serialised per stream by an advisory lock.
func (s *Postgres) Append(ctx context.Context, stream string, drafts []domain.Draft) error {
	return pgInTx(ctx, s.db, s.tr, nil, func(tx *pgTx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 1))`, streamLock(stream)); err != nil {
			return err
		}
		var last domain.Job
		err := tx.QueryRow(ctx, `SELECT seq, hash FROM approval_events WHERE job_id = $1 ORDER BY seq DESC LIMIT 1`, stream).
			Scan(&last.Version, &last.LastHash)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		_, events, err := sealAll(s.keys, stream, last, drafts)
		if err != nil {
			return err
		}
		return insertPGEvents(ctx, tx, events)
	})
}

// Get reads the job's read model.
func (s *Postgres) Get(ctx context.Context, id string) (domain.Job, error) {
	j, err := scanPGJob(s.pool.QueryRow(ctx, `SELECT `+pgJobColumns+` FROM approval_jobs WHERE job_id = $1`, id))
	if errors.Is(err, domain.ErrNotFound) {
		return j, fmt.Errorf("job %s: %w", id, domain.ErrNotFound)
	}
	return j, err
}

// List returns jobs newest first.
func (s *Postgres) List(ctx context.Context, f app.ListFilter) ([]domain.Job, error) {
	var statuses []string
	if len(f.Statuses) > 0 {
		statuses = statusStrings(f.Statuses)
	}
	var before *time.Time
	if !f.ExpiresBefore.IsZero() {
		before = &f.ExpiresBefore
	}
	rows, err := s.pool.Query(ctx, `SELECT `+pgJobColumns+` FROM approval_jobs
		WHERE ($1::text[] IS NULL OR status = ANY($1)) AND ($2 = '' OR session_id = $2)
		  AND ($3::timestamptz IS NULL OR expires_at <= $3)
		ORDER BY requested_at DESC, job_id DESC LIMIT $4 OFFSET $5`, pq.StringArray(statuses), f.SessionID, before, f.Limit, f.Offset)
	if err != nil {
		return nil, err
	}
	return pgCollect(rows, scanPGJob)
}

// Events returns a stream's events in order.
func (s *Postgres) Events(ctx context.Context, id string) ([]domain.Event, error) {
	return s.events(ctx, s.pool, id)
}

// JobIDsOfDay lists the ids of the jobs whose id starts with job_<day>_.
func (s *Postgres) JobIDsOfDay(ctx context.Context, day string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT job_id FROM approval_jobs WHERE job_id LIKE $1`, "job_"+day+"_%")
	if err != nil {
		return nil, err
	}
	return pgCollect(rows, pgString)
}

// LastEvent returns the newest event of stream whose type is one of types (nil when none).
func (s *Postgres) LastEvent(ctx context.Context, stream string, types ...domain.EventType) (*domain.Event, error) {
	return s.lastEvent(ctx, s.pool, stream, types)
}

func (s *Postgres) lastEvent(ctx context.Context, q pgConn, stream string, types []domain.EventType) (*domain.Event, error) {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	evs, err := s.eventsWhere(ctx, q, `job_id = $1 AND type = ANY($2) ORDER BY seq DESC LIMIT 1`, stream, pq.StringArray(names))
	if err != nil || len(evs) == 0 {
		return nil, err
	}
	return &evs[0], nil
}

// AcquireLease implements app.Leases: the lease goes to holder when nobody has it, when its
// holder let it run out by now, or when holder has it already (a renewal); until is its new end.
func (s *Postgres) AcquireLease(ctx context.Context, name, holder string, now, until time.Time) (bool, error) {
	n, err := s.pool.Exec(ctx, `INSERT INTO approval_leases (name, holder, expires_at) VALUES ($1, $2, $4)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE approval_leases.holder = excluded.holder OR approval_leases.expires_at <= $3`, name, holder, now, until)
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

// ReleaseLease implements app.Leases.
func (s *Postgres) ReleaseLease(ctx context.Context, name, holder string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM approval_leases WHERE name = $1 AND holder = $2`, name, holder)
	return err
}

func (s *Postgres) events(ctx context.Context, q pgConn, id string) ([]domain.Event, error) {
	return s.eventsWhere(ctx, q, `job_id = $1 ORDER BY seq`, id)
}

func (s *Postgres) eventsWhere(ctx context.Context, q pgConn, where string, args ...any) ([]domain.Event, error) {
	rows, err := q.Query(ctx, `SELECT id, job_id, seq, type, actor_id, actor_channel, actor_name, channel, payload::text,
		policy_rule, prev_hash, hash, key_id, created_at FROM approval_events WHERE `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []domain.Event
	for rows.Next() {
		var (
			e       domain.Event
			rowID   int64
			typ     string
			payload string
		)
		if err := rows.Scan(&rowID, &e.JobID, &e.Seq, &typ, &e.Actor.ID, &e.Actor.Channel, &e.Actor.DisplayName, &e.Channel, &payload,
			&e.PolicyRule, &e.PrevHash, &e.Hash, &e.KeyID, &e.At); err != nil {
			return nil, err
		}
		e.Type, e.Payload, e.At = domain.EventType(typ), []byte(payload), e.At.UTC()
		e.Legacy = e.KeyID == "" && rowID <= s.legacy
		out = append(out, e)
	}
	return out, rows.Err()
}

// StreamIDs lists every id with events or a job row, sorted.
func (s *Postgres) StreamIDs(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT job_id FROM approval_jobs UNION SELECT DISTINCT job_id FROM approval_events ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	return pgCollect(rows, pgString)
}

// AuditRead returns a stream's row (nil when there is none) and its events from one snapshot.
func (s *Postgres) AuditRead(ctx context.Context, id string) (*domain.ReadModel, []domain.Event, error) {
	var (
		rm  *domain.ReadModel
		evs []domain.Event
	)
	err := pgInTx(ctx, s.db, s.tr, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}, func(tx *pgTx) error {
		r, err := scanPGReadModel(tx.QueryRow(ctx, `SELECT `+pgReadModelColumns+` FROM approval_jobs WHERE job_id = $1`, id))
		switch {
		case err == nil:
			rm = &r
		case !errors.Is(err, domain.ErrNotFound):
			return err
		}
		evs, err = s.events(ctx, tx.pgConn, id)
		return err
	})
	return rm, evs, err
}

func isUniqueViolation(err error) bool {
	pe := pgError(err)
	return pe != nil && pe.Code == "23505"
}
