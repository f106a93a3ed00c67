package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Postgres is the event store on Postgres.
type Postgres struct {
	pool *pgxpool.Pool
}

var _ app.Store = (*Postgres)(nil)

// PostgresOption customises OpenPostgres.
type PostgresOption func(*pgxpool.Config)

// WithTracing gives every SQL statement a span from tp.
func WithTracing(tp trace.TracerProvider) PostgresOption {
	return func(c *pgxpool.Config) { c.ConnConfig.Tracer = pgTracer{tr: tp.Tracer(instrumentation)} }
}

// OpenPostgres connects, applies pending migrations and returns the store.
func OpenPostgres(ctx context.Context, dsn string, opts ...PostgresOption) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The error text can contain the DSN and its password.
		return nil, errors.New("postgres: cannot parse the DSN (PICOCLAW_POSTGRES_DSN)")
	}
	for _, o := range opts {
		o(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	s := &Postgres{pool: pool}
	if err := s.Migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the pool.
func (s *Postgres) Close() { s.pool.Close() }

// Ping checks the connection (readiness).
func (s *Postgres) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// Pool exposes the pool to tests that need to reach under the store.
func (s *Postgres) Pool() *pgxpool.Pool { return s.pool }

// Migrate applies pending migrations in one transaction under an advisory lock, so several
// instances starting at once apply each migration exactly once.
func (s *Postgres) Migrate(ctx context.Context) error {
	ms, err := migrations("postgres")
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
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
		return nil
	})
}

const pgJobColumns = `data, status, patch, content_hash, version, last_hash`

func scanPGJob(r pgx.Row) (domain.Job, error) {
	var (
		data                          []byte
		status, patch, hash, lastHash string
		version                       int64
	)
	if err := r.Scan(&data, &status, &patch, &hash, &version, &lastHash); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return domain.Job{}, domain.ErrNotFound
		}
		return domain.Job{}, err
	}
	return fromRow(data, status, patch, hash, version, lastHash)
}

// Create inserts the job and its first events.
func (s *Postgres) Create(ctx context.Context, id string, drafts []domain.Draft) (domain.Job, error) {
	job, events, err := sealAll(id, domain.Job{}, drafts)
	if err != nil {
		return domain.Job{}, err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		r, err := toRow(job)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO approval_jobs (job_id, status, session_id, channel, route, task_type, plan, patch,
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
		if tag.RowsAffected() == 0 {
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
	return retryOnVersionConflict(func() (domain.Job, error) { return s.update(ctx, id, fn) })
}

func (s *Postgres) update(ctx context.Context, id string, fn func(domain.Job) ([]domain.Draft, error)) (domain.Job, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return domain.Job{}, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	job, err := scanPGJob(tx.QueryRow(ctx, `SELECT `+pgJobColumns+` FROM approval_jobs WHERE job_id = $1 FOR UPDATE`, id))
	if err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return domain.Job{}, fmt.Errorf("job %s: %w", id, domain.ErrNotFound)
		}
		return domain.Job{}, err
	}
	drafts, ferr := fn(job)
	if len(drafts) == 0 {
		return job, ferr
	}
	next, events, err := sealAll(id, job, drafts)
	if err != nil {
		return job, err
	}
	if err := insertPGEvents(ctx, tx, events); err != nil {
		if isUniqueViolation(err) {
			return job, domain.ErrVersionConflict
		}
		return job, err
	}
	r, err := toRow(next)
	if err != nil {
		return job, err
	}
	tag, err := tx.Exec(ctx, `UPDATE approval_jobs SET status=$2, patch=$3, content_hash=$4, auto_approved=$5, policy_rule=$6,
		approver=$7, decided_at=$8, expires_at=$9, executed_at=$10, finished_at=$11, result=$12, version=$13, last_hash=$14,
		data=$15, uses_browser=$16 WHERE job_id=$1 AND version=$17`,
		id, string(next.Status), next.Patch, next.ContentHash, next.AutoApproved, next.PolicyRule, r.approver, r.decided,
		r.expires, r.executed, r.finished, nullJSON(r.result), next.Version, next.LastHash, string(r.data), next.UsesBrowser, job.Version)
	if err != nil {
		return job, err
	}
	if tag.RowsAffected() != 1 {
		return job, domain.ErrVersionConflict
	}
	if err := tx.Commit(ctx); err != nil {
		if isUniqueViolation(err) {
			return job, domain.ErrVersionConflict
		}
		return job, err
	}
	return next, ferr
}

func insertPGEvents(ctx context.Context, tx pgx.Tx, events []domain.Event) error {
	for _, e := range events {
		if _, err := tx.Exec(ctx, `INSERT INTO approval_events (job_id, seq, type, actor_id, actor_channel, actor_name, channel,
			payload, policy_rule, prev_hash, hash, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)`,
			e.JobID, e.Seq, string(e.Type), e.Actor.ID, e.Actor.Channel, e.Actor.DisplayName, e.Channel, string(e.Payload),
			e.PolicyRule, e.PrevHash, e.Hash, e.At); err != nil {
			return err
		}
	}
	return nil
}

// Append records events on a non-job stream, serialised per stream by an advisory lock.
func (s *Postgres) Append(ctx context.Context, stream string, drafts []domain.Draft) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 1))`, "picoclaw.approval.stream."+stream); err != nil {
			return err
		}
		var last domain.Job
		err := tx.QueryRow(ctx, `SELECT seq, hash FROM approval_events WHERE job_id = $1 ORDER BY seq DESC LIMIT 1`, stream).
			Scan(&last.Version, &last.LastHash)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		_, events, err := sealAll(stream, last, drafts)
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
		ORDER BY requested_at DESC, job_id DESC LIMIT $4 OFFSET $5`, statuses, f.SessionID, before, f.Limit, f.Offset)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []domain.Job
	for rows.Next() {
		j, err := scanPGJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// Events returns a stream's events in order.
func (s *Postgres) Events(ctx context.Context, id string) ([]domain.Event, error) {
	rows, err := s.pool.Query(ctx, `SELECT job_id, seq, type, actor_id, actor_channel, actor_name, channel, payload::text,
		policy_rule, prev_hash, hash, created_at FROM approval_events WHERE job_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []domain.Event
	for rows.Next() {
		var (
			e       domain.Event
			typ     string
			payload string
		)
		if err := rows.Scan(&e.JobID, &e.Seq, &typ, &e.Actor.ID, &e.Actor.Channel, &e.Actor.DisplayName, &e.Channel, &payload,
			&e.PolicyRule, &e.PrevHash, &e.Hash, &e.At); err != nil {
			return nil, err
		}
		e.Type, e.Payload, e.At = domain.EventType(typ), []byte(payload), e.At.UTC()
		out = append(out, e)
	}
	return out, rows.Err()
}

func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
