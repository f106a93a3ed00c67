// Package sqlitealloc allocates JobIDs (SPEC §3) from a per-day counter in the embedded state
// engine (pkg/sqlstate), the same counter the Redis allocator keeps in a distributed
// deployment: every service of the embedded suite opens the same file, so chat-mio and the
// gateways never hand out one id twice, and a number is on disk before it is handed out.
package sqlitealloc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
)

// Table holds one row per day: its last number and when the row expires (jobid.CounterTTL
// after the day's first number, like the Redis key).
const Table = "jobid_counters"

var migrations = []string{
	`CREATE TABLE ` + Table + ` (
		day        TEXT PRIMARY KEY,
		n          INTEGER NOT NULL,
		expires_at INTEGER NOT NULL)`,
}

type counter struct{ db *sqlstate.DB }

var (
	_ jobid.Counter = (*counter)(nil)
	_ jobid.Seeder  = (*counter)(nil)
)

// New migrates the counter table and returns an allocator on db.
func New(ctx context.Context, db *sqlstate.DB, loc *time.Location, opts ...jobid.Option) (*jobid.Daily, error) {
	if err := db.Migrate(ctx, "jobid", migrations...); err != nil {
		return nil, fmt.Errorf("job id counter: %w", err)
	}
	db.Expire(Table)
	if err := db.Prepare(ctx, incr, incrIfPresent, seed); err != nil {
		return nil, fmt.Errorf("job id counter: %w", err)
	}
	return jobid.NewDaily(&counter{db: db}, loc, opts...), nil
}

const incr = `INSERT INTO ` + Table + ` (day, n, expires_at) VALUES (?1, ?4, ?2)
	ON CONFLICT (day) DO UPDATE SET
		n          = CASE WHEN expires_at > 0 AND expires_at <= ?3 THEN ?4 ELSE n + ?4 END,
		expires_at = CASE WHEN expires_at > 0 AND expires_at <= ?3 THEN ?2 ELSE expires_at END
	RETURNING n`

// Incr implements jobid.Counter in one statement, one write transaction: the day's row is
// created at n or incremented by n; a row past its expiry counts as absent, as an expired Redis
// key would.
func (c *counter) Incr(ctx context.Context, day string, n int64) (int64, error) {
	now := sqlstate.NowMS()
	var last int64
	if err := c.db.WriteRow(ctx, incr, []any{day, now + jobid.CounterTTL.Milliseconds(), now, n}, &last); err != nil {
		return 0, fmt.Errorf("job id counter %s: %w", day, err)
	}
	return last, nil
}

// incrIfPresent adds to a live counter; an absent or expired one is not created.
const incrIfPresent = `UPDATE ` + Table + ` SET n = n + ?3 WHERE day = ?1 AND NOT (expires_at > 0 AND expires_at <= ?2) RETURNING n`

// seed starts an absent or expired counter at the floor and raises a lower one to it; a higher
// one is left alone.
const seed = `INSERT INTO ` + Table + ` (day, n, expires_at) VALUES (?1, ?2, ?3)
	ON CONFLICT (day) DO UPDATE SET
		n          = CASE WHEN expires_at > 0 AND expires_at <= ?4 THEN ?2 ELSE max(n, ?2) END,
		expires_at = CASE WHEN expires_at > 0 AND expires_at <= ?4 THEN ?3 ELSE expires_at END`

// IncrIfPresent implements jobid.Seeder.
func (c *counter) IncrIfPresent(ctx context.Context, day string, n int64) (int64, bool, error) {
	var last int64
	switch err := c.db.WriteRow(ctx, incrIfPresent, []any{day, sqlstate.NowMS(), n}, &last); {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("job id counter %s: %w", day, err)
	}
	return last, true, nil
}

// Seed implements jobid.Seeder.
func (c *counter) Seed(ctx context.Context, day string, floor int64) error {
	now := sqlstate.NowMS()
	if _, err := c.db.Write(ctx, seed, day, floor, now+jobid.CounterTTL.Milliseconds(), now); err != nil {
		return fmt.Errorf("job id counter %s: %w", day, err)
	}
	return nil
}
