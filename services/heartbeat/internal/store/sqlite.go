//go:build !serveronly

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
)

// SQLite stores one row per agent in the embedded state engine (pkg/sqlstate), the same JSON
// value the Redis store keeps under the agent's key. Agents never expire (nor do their keys).
type SQLite struct {
	db *sqlstate.DB
}

var _ app.Store = (*SQLite)(nil)

const tableAgents = "heartbeat_agents"

var sqliteMigrations = []string{
	`CREATE TABLE ` + tableAgents + ` (id TEXT PRIMARY KEY, data TEXT NOT NULL)`,
}

// Statements of Update, prepared once: every service beats all the time.
const (
	selectAgent = `SELECT data FROM ` + tableAgents + ` WHERE id = ?`
	putAgent    = `INSERT INTO ` + tableAgents + ` (id, data) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET data = excluded.data`
)

// NewSQLite migrates the store's table in db and returns the store.
func NewSQLite(ctx context.Context, db *sqlstate.DB) (*SQLite, error) {
	if err := db.Migrate(ctx, "heartbeat", sqliteMigrations...); err != nil {
		return nil, fmt.Errorf("heartbeat store: %w", err)
	}
	if err := db.Prepare(ctx, selectAgent, putAgent); err != nil {
		return nil, fmt.Errorf("heartbeat store: %w", err)
	}
	return &SQLite{db: db}, nil
}

// Update implements app.Store in one write transaction: SQLite has one writer at a time, so a
// concurrent update of the same agent waits for this one and then reads its result (fn runs
// again only when its transaction is rolled back; see sqlstate.DB.Tx).
func (s *SQLite) Update(ctx context.Context, id string, fn func(cur *domain.Agent) *domain.Agent) error {
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var raw string
		sel, err := s.db.Stmt(selectAgent)
		if err != nil {
			return err
		}
		err = tx.StmtContext(ctx, sel).QueryRowContext(ctx, id).Scan(&raw)
		missing := errors.Is(err, sql.ErrNoRows)
		if err != nil && !missing {
			return err
		}
		data, err := step(id, []byte(raw), missing, fn)
		if err != nil || data == nil {
			return err
		}
		put, err := s.db.Stmt(putAgent)
		if err == nil {
			_, err = tx.StmtContext(ctx, put).ExecContext(ctx, id, string(data))
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("update agent %s: %w", id, err)
	}
	return nil
}

// Delete implements app.Store.
func (s *SQLite) Delete(ctx context.Context, key string) (*domain.Agent, error) {
	var raw string
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `DELETE FROM `+tableAgents+` WHERE id = ? RETURNING data`, key).Scan(&raw)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("forget agent %s: %w", key, err)
	}
	a, err := decode([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", key, err)
	}
	return &a, nil
}

// List implements app.Store.
func (s *SQLite) List(ctx context.Context) ([]domain.Agent, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, data FROM `+tableAgents+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	defer rows.Close()
	var out []domain.Agent
	for rows.Next() {
		var id, raw string
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, fmt.Errorf("list agents: %w", err)
		}
		a, err := decode([]byte(raw))
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", id, err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	return out, nil
}

// Ping checks the database (readiness).
func (s *SQLite) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }
