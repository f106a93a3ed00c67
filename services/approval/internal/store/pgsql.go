//go:build !sqliteonly

package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// The Postgres store talks to the server through database/sql and lib/pq, a small driver: the
// statements are plain SQL with text parameters and results, so nothing needs a type system
// beyond database/sql's conversions. This file holds what the store needs around them: the
// DSN (the same keywords, URL form, environment variables and defaults as libpq), a bounded
// pool whose connections keep their statements prepared, a span per statement and
// transactions.

// pgOpen parses dsn (pgConfig) and returns a pool that has not connected yet.
func pgOpen(dsn string) (*sql.DB, error) {
	cfg, pool, err := pgConfig(dsn)
	if err != nil {
		return nil, err
	}
	c, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(pgConnector{c})
	db.SetMaxOpenConns(pool.maxConns)
	db.SetMaxIdleConns(pool.maxConns)
	db.SetConnMaxLifetime(pool.lifetime)
	db.SetConnMaxIdleTime(pool.idle)
	return db, nil
}

// pgConfig reads a DSN: libpq's keywords or URL form, its environment variables and defaults —
// sslmode too defaults to prefer, as in libpq (lib/pq's own default is require). The pool
// settings a DSN may carry (pool_max_conns, pool_max_conn_lifetime, pool_max_conn_idle_time)
// are taken out of it and returned; the other client-side settings Go drivers read from a DSN
// (pool_min_conns, pool_health_check_period, statement caches, exec modes) are dropped rather
// than sent to the server as run-time parameters, which it would refuse. Without them the pool
// holds up to max(4, CPUs) connections, each for up to an hour, idle for up to 30 minutes.
func pgConfig(dsn string) (pq.Config, pgPool, error) {
	cfg, err := pq.NewConfig(dsn)
	if err != nil {
		return pq.Config{}, pgPool{}, err
	}
	if cfg.SSLMode == "" {
		cfg.SSLMode = pq.SSLModePrefer
	}
	pool := pgPool{maxConns: max(4, runtime.NumCPU()), lifetime: time.Hour, idle: 30 * time.Minute}
	for k, v := range cfg.Runtime {
		switch k {
		case "pool_max_conns":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return pq.Config{}, pgPool{}, fmt.Errorf("pool_max_conns: want a positive number, got %q", v)
			}
			pool.maxConns = n
		case "pool_max_conn_lifetime", "pool_max_conn_idle_time":
			d, err := time.ParseDuration(v)
			if err != nil {
				return pq.Config{}, pgPool{}, fmt.Errorf("%s: %w", k, err)
			}
			if k == "pool_max_conn_lifetime" {
				pool.lifetime = d
			} else {
				pool.idle = d
			}
		case "pool_min_conns", "pool_min_idle_conns", "pool_health_check_period", "pool_max_conn_lifetime_jitter",
			"statement_cache_capacity", "description_cache_capacity", "default_query_exec_mode":
		default:
			continue
		}
		delete(cfg.Runtime, k)
	}
	return cfg, pool, nil
}

type pgPool struct {
	maxConns       int
	lifetime, idle time.Duration
}

// pgConnector marks the errors of opening a connection (pgConnectError): whatever refused it —
// the network, TLS, authentication, a server starting up — the database is not there to use.
// The connections it opens keep their statements prepared (pgStmtConn).
type pgConnector struct{ driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, &pgConnectError{err: err}
	}
	return newPGStmtConn(conn), nil
}

type pgConnectError struct{ err error }

func (e *pgConnectError) Error() string { return e.err.Error() }
func (e *pgConnectError) Unwrap() error { return e.err }

// pgStmtCacheSize bounds the statements a connection keeps prepared; the store has a few dozen.
const pgStmtCacheSize = 256

// pgStmtConn is a driver connection that prepares each statement with parameters once and then
// only binds and executes it: one round trip per statement, and the server parses and plans it
// once per connection. A statement the server no longer knows or can no longer run as planned
// is dropped from the cache and prepared again next time.
type pgStmtConn struct {
	conn  driver.Conn
	stmts map[string]driver.Stmt
}

// The driver interfaces database/sql uses, all passed on to lib/pq's connection.
type pgDriverConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

var _ pgDriverConn = (*pgStmtConn)(nil)

func newPGStmtConn(c driver.Conn) driver.Conn {
	if _, ok := c.(pgDriverConn); !ok {
		return c // not lib/pq's connection as known: used as it is
	}
	return &pgStmtConn{conn: c, stmts: map[string]driver.Stmt{}}
}

func (c *pgStmtConn) inner() pgDriverConn { return c.conn.(pgDriverConn) }

func (c *pgStmtConn) Prepare(query string) (driver.Stmt, error) { return c.conn.Prepare(query) }
func (c *pgStmtConn) Close() error                              { return c.conn.Close() }
func (c *pgStmtConn) Begin() (driver.Tx, error) {
	return c.inner().BeginTx(context.Background(), driver.TxOptions{})
}
func (c *pgStmtConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.inner().BeginTx(ctx, opts)
}
func (c *pgStmtConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.inner().PrepareContext(ctx, query)
}
func (c *pgStmtConn) Ping(ctx context.Context) error         { return c.inner().Ping(ctx) }
func (c *pgStmtConn) ResetSession(ctx context.Context) error { return c.inner().ResetSession(ctx) }
func (c *pgStmtConn) IsValid() bool                          { return c.inner().IsValid() }
func (c *pgStmtConn) CheckNamedValue(nv *driver.NamedValue) error {
	return c.inner().CheckNamedValue(nv)
}

// stmt returns query's prepared statement on this connection, nil when it should run unprepared
// (no parameters: the simple protocol does it in one round trip; or the cache is full).
func (c *pgStmtConn) stmt(ctx context.Context, query string, args []driver.NamedValue) (driver.Stmt, error) {
	if len(args) == 0 {
		return nil, nil
	}
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	if len(c.stmts) >= pgStmtCacheSize {
		return nil, nil
	}
	st, err := c.inner().PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.stmts[query] = st
	return st, nil
}

// forget drops a cached statement after an error that says its prepared form is gone or stale
// (26000 invalid statement name, 0A000 "cached plan must not change result type").
func (c *pgStmtConn) forget(query string, err error) {
	if pe := pgError(err); pe != nil && (pe.Code == "26000" || pe.Code == "0A000") {
		delete(c.stmts, query)
	}
}

func (c *pgStmtConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	st, err := c.stmt(ctx, query, args)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return c.inner().ExecContext(ctx, query, args)
	}
	se, ok := st.(driver.StmtExecContext)
	if !ok {
		return c.inner().ExecContext(ctx, query, args)
	}
	res, err := se.ExecContext(ctx, args)
	if err != nil {
		c.forget(query, err)
	}
	return res, err
}

func (c *pgStmtConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	st, err := c.stmt(ctx, query, args)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return c.inner().QueryContext(ctx, query, args)
	}
	sq, ok := st.(driver.StmtQueryContext)
	if !ok {
		return c.inner().QueryContext(ctx, query, args)
	}
	rows, err := sq.QueryContext(ctx, args)
	if err != nil {
		c.forget(query, err)
	}
	return rows, err
}

// pgQuerier is a pool or a transaction.
type pgQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// pgConn runs statements on a pool or in a transaction, each in a span (SPEC §12) when tr is
// set; the tracer provider copies job_id from the baggage onto it.
type pgConn struct {
	q  pgQuerier
	tr trace.Tracer
}

func (c pgConn) span(ctx context.Context, query string) (context.Context, func(error)) {
	if c.tr == nil {
		return ctx, func(error) {}
	}
	ctx, span := c.tr.Start(ctx, "sql "+verb(query), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system", "postgresql"), attribute.String("db.statement", query)))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// Exec runs a statement and returns the number of rows it affected.
func (c pgConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	ctx, end := c.span(ctx, query)
	res, err := c.q.ExecContext(ctx, query, args...)
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	end(err)
	return n, err
}

// Query runs a query; its span ends when the rows are closed.
func (c pgConn) Query(ctx context.Context, query string, args ...any) (*pgRows, error) {
	ctx, end := c.span(ctx, query)
	rows, err := c.q.QueryContext(ctx, query, args...)
	if err != nil {
		end(err)
		return nil, err
	}
	return &pgRows{Rows: rows, end: end}, nil
}

// QueryRow runs a query whose first row Scan reads (sql.ErrNoRows when there is none).
func (c pgConn) QueryRow(ctx context.Context, query string, args ...any) pgRow {
	rows, err := c.Query(ctx, query, args...)
	return pgRow{rows: rows, err: err}
}

type pgRows struct {
	*sql.Rows
	end func(error)
}

// Close closes the rows and ends the query's span (idempotent).
func (r *pgRows) Close() error {
	err := r.Rows.Close()
	if r.end != nil {
		if err == nil {
			err = r.Rows.Err()
		}
		r.end(err)
		r.end = nil
	}
	return err
}

// pgScanner is a row to scan: pgRow or pgRows on its current row.
type pgScanner interface{ Scan(dest ...any) error }

type pgRow struct {
	rows *pgRows
	err  error
}

func (r pgRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	return r.rows.Close()
}

// pgCollect reads every row with scan and closes the rows.
func pgCollect[T any](rows *pgRows, scan func(pgScanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, rows.Close()
}

func pgString(r pgScanner) (string, error) {
	var s string
	err := r.Scan(&s)
	return s, err
}

// pgTx is a transaction whose statements (BEGIN, COMMIT and ROLLBACK too) are traced.
type pgTx struct {
	pgConn
	tx   *sql.Tx
	done bool
}

// pgBegin starts a transaction on db (opts nil: the server's defaults).
func pgBegin(ctx context.Context, db *sql.DB, tr trace.Tracer, opts *sql.TxOptions) (*pgTx, error) {
	stmt := "begin"
	if opts != nil {
		if opts.Isolation == sql.LevelRepeatableRead {
			stmt += " isolation level repeatable read"
		}
		if opts.ReadOnly {
			stmt += " read only"
		}
	}
	_, end := pgConn{tr: tr}.span(ctx, stmt)
	tx, err := db.BeginTx(ctx, opts)
	end(err)
	if err != nil {
		return nil, err
	}
	return &pgTx{pgConn: pgConn{q: tx, tr: tr}, tx: tx}, nil
}

// Commit commits; a commit after Commit or Rollback is sql.ErrTxDone.
func (t *pgTx) Commit(ctx context.Context) error {
	if t.done {
		return sql.ErrTxDone
	}
	t.done = true
	_, end := t.span(ctx, "commit")
	err := t.tx.Commit()
	end(err)
	return err
}

// Rollback rolls back a transaction still open; after Commit it does nothing.
func (t *pgTx) Rollback(ctx context.Context) error {
	if t.done {
		return sql.ErrTxDone
	}
	t.done = true
	_, end := t.span(ctx, "rollback")
	err := t.tx.Rollback()
	end(err)
	return err
}

// pgInTx runs fn in a transaction and commits it when fn returns nil; an error or a panic rolls
// it back.
func pgInTx(ctx context.Context, db *sql.DB, tr trace.Tracer, opts *sql.TxOptions, fn func(*pgTx) error) error {
	tx, err := pgBegin(ctx, db, tr, opts)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// pgIdent quotes an identifier: in double quotes, inner ones doubled, NUL bytes dropped.
func pgIdent(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, "\x00", ""), `"`, `""`) + `"`
}

// pgError is the server's error, or nil.
func pgError(err error) *pq.Error {
	var pe *pq.Error
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}

func verb(sql string) string {
	f := strings.Fields(sql)
	if len(f) == 0 {
		return "query"
	}
	return strings.ToUpper(f[0])
}
