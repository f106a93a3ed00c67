//go:build !serveronly

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// SQLiteGrants keeps the Auto-Approve grant in the embedded state engine (pkg/sqlstate): one
// row whose expires_at is the grant's lifetime, sealed as RedisGrants seals its key, so whoever
// can write the state file cannot make or widen a grant. Set and Delete are durable when they
// return: an Auto-Approve switched off stays off across a crash.
type SQLiteGrants struct {
	db *sqlstate.DB
	grantSeal
}

var _ app.GrantStore = (*SQLiteGrants)(nil)

// GrantsTable holds the grant row (name grantRow).
const GrantsTable = "approval_grants"

const grantRow = "auto_approve"

var grantsMigrations = []string{
	`CREATE TABLE ` + GrantsTable + ` (
		name       TEXT PRIMARY KEY,
		value      BLOB NOT NULL,
		expires_at INTEGER NOT NULL)`,
}

// NewSQLiteGrants migrates the grant table in db and returns the store, sealed with sealKey
// (see GrantSealKey).
func NewSQLiteGrants(ctx context.Context, db *sqlstate.DB, sealKey []byte, log *slog.Logger) (*SQLiteGrants, error) {
	if err := db.Migrate(ctx, "approval-grants", grantsMigrations...); err != nil {
		return nil, fmt.Errorf("grant store: %w", err)
	}
	db.Expire(GrantsTable)
	return &SQLiteGrants{db: db, grantSeal: newGrantSeal(sealKey, "sqlite:"+GrantsTable+":"+grantRow, log)}, nil
}

// Get returns the grant, or nil when there is none (or it has expired, or its seal fails).
func (s *SQLiteGrants) Get(ctx context.Context) (*domain.Grant, error) {
	b, err := s.read(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("sqlite get grant: %w", err)
	}
	return s.opened(ctx, b), nil
}

// rowQuerier is the database or a transaction.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// read returns the stored value, nil when there is none or it has expired.
func (s *SQLiteGrants) read(ctx context.Context, q rowQuerier) ([]byte, error) {
	var b []byte
	err := q.QueryRowContext(ctx, `SELECT value FROM `+GrantsTable+` WHERE name = ? AND (expires_at = 0 OR expires_at > ?)`,
		grantRow, sqlstate.NowMS()).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return b, err
}

func (s *SQLiteGrants) opened(ctx context.Context, b []byte) *domain.Grant {
	if b == nil {
		return nil
	}
	return s.open(ctx, b)
}

// Set replaces the grant; the row expires with it.
func (s *SQLiteGrants) Set(ctx context.Context, g domain.Grant, ttl time.Duration) error {
	b, err := s.seal(g)
	if err != nil {
		return err
	}
	if _, err := s.db.Write(ctx, `INSERT INTO `+GrantsTable+` (name, value, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
		grantRow, b, sqlstate.ExpiresAt(ttl)); err != nil {
		return fmt.Errorf("sqlite set grant: %w", err)
	}
	return nil
}

// Delete removes the grant and returns it, in one transaction.
func (s *SQLiteGrants) Delete(ctx context.Context) (*domain.Grant, error) {
	var b []byte
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		if b, err = s.read(ctx, tx); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM `+GrantsTable+` WHERE name = ?`, grantRow)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite delete grant: %w", err)
	}
	return s.opened(ctx, b), nil
}
