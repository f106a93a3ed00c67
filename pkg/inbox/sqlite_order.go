//go:build !serveronly

package inbox

import (
	"context"
	"database/sql"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
)

// sqlTurn reads an entry's turn (order.go) in one statement: who holds it now, and whether an
// earlier entry of its key is pending in the group. Entries are deleted once acknowledged, so the
// earlier entries of one key (found through inbox_entries_key) are the few still in flight.
const sqlTurn = `SELECT
	(SELECT consumer FROM inbox_pending WHERE stream = ?1 AND grp = ?2 AND seq = ?3),
	EXISTS (SELECT 1 FROM inbox_entries e JOIN inbox_pending p ON p.stream = e.stream AND p.grp = ?2 AND p.seq = e.seq
		WHERE e.stream = ?1 AND e.event_key = ?4 AND e.seq < ?3)`

// migrateOrder adds what the turn reads by, under a component of its own (the inbox's own
// steps stay the inbox's).
func migrateOrder(ctx context.Context, db *sqlstate.DB) error {
	return db.Migrate(ctx, "inbox_order", `CREATE INDEX inbox_entries_key ON inbox_entries (stream, event_key, seq)`)
}

func (q *sqliteQueue) turn(ctx context.Context, consumer, key, id string) (turn, error) {
	return q.turnIn(ctx, nil, consumer, key, id)
}

// turnIn reads the turn within tx (on the database when tx is nil).
func (q *sqliteQueue) turnIn(ctx context.Context, tx *sql.Tx, consumer, key, id string) (turn, error) {
	var holder sql.NullString
	var earlier bool
	if err := q.row(ctx, tx, sqlTurn, q.cfg.Stream, q.cfg.Group, seqOf(id), key).Scan(&holder, &earlier); err != nil {
		return turnWait, err
	}
	switch {
	case !holder.Valid || holder.String != consumer:
		return turnLost, nil
	case earlier:
		return turnWait, nil
	}
	return turnGo, nil
}

// sqlOutstanding: an entry is deleted once acknowledged (or buried), so any entry of the key
// left in the stream is outstanding (read or not).
const sqlOutstanding = `SELECT EXISTS (SELECT 1 FROM inbox_entries WHERE stream = ? AND event_key = ?)`

func (q *sqliteQueue) outstanding(ctx context.Context, key string) (bool, error) {
	var yes bool
	err := q.row(ctx, nil, sqlOutstanding, q.cfg.Stream, key).Scan(&yes)
	return yes, err
}

// prune has nothing to do: consumers exist only through their pending entries.
func (q *sqliteQueue) prune(context.Context, time.Duration) (int, error) { return 0, nil }
