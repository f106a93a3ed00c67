// Package store implements the approval event store on Postgres (lib/pq) and SQLite
// (modernc.org/sqlite), and the Auto-Approve grant store on Redis.
package store

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

//go:embed migrations roles
var migrationFS embed.FS

// options are what OpenPostgres and OpenSQLite accept.
type options struct {
	keys       *domain.Keyring
	tracer     trace.TracerProvider
	migrateDSN string
	role       string
	readOnly   bool
}

// Option customises OpenPostgres and OpenSQLite.
type Option func(*options)

// PostgresOption is the former name of Option.
type PostgresOption = Option

// WithKeyring gives the store the audit keys: the current one seals new events, every one
// verifies. A store without keys cannot write.
func WithKeyring(k *domain.Keyring) Option { return func(o *options) { o.keys = k } }

// WithTracing gives every SQL statement a span from tp (Postgres).
func WithTracing(tp trace.TracerProvider) Option { return func(o *options) { o.tracer = tp } }

// WithMigrateDSN migrates (and grants the runtime role its privileges) over dsn, the owner's
// connection, instead of the runtime connection (Postgres).
func WithMigrateDSN(dsn string) Option { return func(o *options) { o.migrateDSN = dsn } }

// WithRuntimeRole names the role the privileges are granted to; default: the runtime DSN's user.
func WithRuntimeRole(role string) Option { return func(o *options) { o.role = role } }

// ReadOnly opens an existing audit store without migrating (verification).
func ReadOnly() Option { return func(o *options) { o.readOnly = true } }

func collect(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

type migration struct {
	version int
	name    string
	sql     string
}

func migrations(dialect string) ([]migration, error) {
	dir := "migrations/" + dialect
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration %s: name must be NNN_name.sql", e.Name())
		}
		b, err := fs.ReadFile(migrationFS, dir+"/"+e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	return out, nil
}

// sealAll numbers, chains and applies drafts after the job's (or stream's) last event.
func sealAll(keys *domain.Keyring, stream string, job domain.Job, drafts []domain.Draft) (domain.Job, []domain.Event, error) {
	events := make([]domain.Event, 0, len(drafts))
	for _, d := range drafts {
		e, err := keys.Seal(stream, job.Version, job.LastHash, d)
		if err != nil {
			return job, nil, err
		}
		if !strings.HasPrefix(stream, "_") {
			if err := job.Apply(e); err != nil {
				return job, nil, err
			}
		} else {
			job.Version, job.LastHash = e.Seq, e.Hash
		}
		events = append(events, e)
	}
	return job, events, nil
}

// row is the read model's column values of a job.
type row struct {
	data               []byte
	risk, cost         []byte
	result             []byte
	approver           string
	decided, expires   *time.Time
	executed, finished *time.Time
}

func toRow(j domain.Job) (row, error) {
	stripped := j
	stripped.Patch = "" // the patch column is the one copy the claim re-hashes
	data, err := json.Marshal(stripped)
	if err != nil {
		return row{}, err
	}
	risk, _ := json.Marshal(j.Risk)
	cost, _ := json.Marshal(j.Cost)
	r := row{data: data, risk: risk, cost: cost, approver: j.DecidedBy.ID}
	if len(j.Result) > 0 {
		r.result = j.Result
	}
	opt := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		return &t
	}
	r.decided, r.expires, r.executed, r.finished = opt(j.DecidedAt), opt(j.ExpiresAt), opt(j.ExecutedAt), opt(j.FinishedAt)
	return r, nil
}

// fromRow rebuilds a job from the read model: data plus the columns that are authoritative.
func fromRow(data []byte, status, patch, hash string, version int64, lastHash string) (domain.Job, error) {
	var j domain.Job
	if err := json.Unmarshal(data, &j); err != nil {
		return j, fmt.Errorf("decode job: %w", err)
	}
	j.Status, j.Patch, j.ContentHash, j.Version, j.LastHash = domain.Status(status), patch, hash, version, lastHash
	return j, nil
}

func statusStrings(ss []domain.Status) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// maxAttempts bounds retries after an optimistic-concurrency miss.
const maxAttempts = 8

// retryOnVersionConflict reruns one read-decide-write transaction when another writer committed
// first; the loser re-reads the job and decides again (usually: the first decision won).
func retryOnVersionConflict(update func() (domain.Job, error)) (domain.Job, error) {
	for attempt := 1; ; attempt++ {
		job, err := update()
		if errors.Is(err, domain.ErrVersionConflict) && attempt < maxAttempts {
			continue
		}
		return job, err
	}
}

// checked verifies a job's log against its row inside the writing transaction, so nothing is
// decided on, or appended to, a log that was changed behind the service's back. fn decides on the
// job rebuilt from the events; the patch is the row's copy, which the claim re-hashes itself.
func checked(keys *domain.Keyring, id string, rm domain.ReadModel, events []domain.Event) (domain.Job, error) {
	rebuilt, err := keys.VerifyJob(id, &rm, events)
	if err != nil {
		return domain.Job{}, fmt.Errorf("job %s: %w", id, err)
	}
	rebuilt.Patch = rm.Job.Patch
	return rebuilt, nil
}

// updateTx is one database transaction of Update, in the database's own dialect.
type updateTx interface {
	// lockStream takes the lock of a stream that is not a job, shared: Append takes it
	// exclusively, so the stream does not change until the transaction ends (SQLite: one
	// writer at a time anyway).
	lockStream(ctx context.Context, stream string) error
	// lockedReadModel reads the job's row (locked where the database can).
	lockedReadModel(ctx context.Context, id string) (domain.ReadModel, error)
	events(ctx context.Context, id string) ([]domain.Event, error)
	lastEvent(ctx context.Context, stream string, types []domain.EventType) (*domain.Event, error)
	// insertEvents appends events; a taken (job_id, seq) is domain.ErrVersionConflict.
	insertEvents(ctx context.Context, events []domain.Event) error
	// writeRow stores next's read model if the row is still at version prev; otherwise it is
	// domain.ErrVersionConflict.
	writeRow(ctx context.Context, id string, next domain.Job, r row, prev int64) error
	// insertNotice records a notice owed to the requester's chat (once per job).
	insertNotice(ctx context.Context, n domain.Notice) error
	commit(ctx context.Context) error
}

// txStream reads a stream inside an update's transaction (app.StreamReader).
type txStream struct {
	ctx    context.Context
	tx     updateTx
	stream string
}

func (r txStream) LastEvent(types ...domain.EventType) (*domain.Event, error) {
	return r.tx.lastEvent(r.ctx, r.stream, types)
}

func (r txStream) Events() ([]domain.Event, error) { return r.tx.events(r.ctx, r.stream) }

// update is UpdateReading's one flow over both databases: lock the stream to read (if any),
// read the job and its events, check them, run fn, seal and insert the new events, write the
// read model and the notice the change owes the requester's chat (domain.NoticeOf), all in tx.
func update(ctx context.Context, keys *domain.Keyring, tx updateTx, id, stream string, fn func(domain.Job, app.StreamReader) ([]domain.Draft, error)) (domain.Job, error) {
	var reader app.StreamReader
	if stream != "" {
		// Before the job's row: every transaction that takes both takes them in this order.
		if err := tx.lockStream(ctx, stream); err != nil {
			return domain.Job{}, err
		}
		reader = txStream{ctx: ctx, tx: tx, stream: stream}
	}
	rm, err := tx.lockedReadModel(ctx, id)
	if err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return domain.Job{}, fmt.Errorf("job %s: %w", id, domain.ErrNotFound)
		}
		return domain.Job{}, err
	}
	logged, err := tx.events(ctx, id)
	if err != nil {
		return domain.Job{}, err
	}
	job, err := checked(keys, id, rm, logged)
	if err != nil {
		return rm.Job, err
	}
	drafts, ferr := fn(job, reader)
	if len(drafts) == 0 {
		return job, ferr
	}
	next, events, err := sealAll(keys, id, job, drafts)
	if err != nil {
		return job, err
	}
	if err := tx.insertEvents(ctx, events); err != nil {
		return job, err
	}
	r, err := toRow(next)
	if err != nil {
		return job, err
	}
	if err := tx.writeRow(ctx, id, next, r, job.Version); err != nil {
		return job, err
	}
	// The notice is part of the decision: both commit, or neither.
	if n, ok := domain.NoticeOf(job, next); ok {
		if err := tx.insertNotice(ctx, n); err != nil {
			return job, err
		}
	}
	if err := tx.commit(ctx); err != nil {
		return job, err
	}
	return next, ferr
}

func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// reading adapts an Update callback to UpdateReading's.
func reading(fn func(domain.Job) ([]domain.Draft, error)) func(domain.Job, app.StreamReader) ([]domain.Draft, error) {
	return func(j domain.Job, _ app.StreamReader) ([]domain.Draft, error) { return fn(j) }
}

// streamLock names the advisory lock of a stream that is not a job (Append, UpdateReading).
func streamLock(stream string) string { return "picoclaw.approval.stream." + stream }
