package inbox

import (
	"context"
	"database/sql"
	"time"
)

// sqlTurn reads an entry's turn (order.go) in one statement: who holds it now, and whether an
// earlier entry of its key is pending in the group. The pending rows are the traffic in flight,
// so the join stays small.
const sqlTurn = `SELECT
	(SELECT consumer FROM inbox_pending WHERE stream = ?1 AND grp = ?2 AND seq = ?3),
	EXISTS (SELECT 1 FROM inbox_pending p JOIN inbox_entries e ON e.stream = p.stream AND e.seq = p.seq
		WHERE p.stream = ?1 AND p.grp = ?2 AND p.seq < ?3 AND e.event_key = ?4)`

func (q *sqliteQueue) turn(ctx context.Context, consumer, key, id string) (turn, error) {
	var holder sql.NullString
	var earlier bool
	if err := q.row(ctx, nil, sqlTurn, q.cfg.Stream, q.cfg.Group, seqOf(id), key).Scan(&holder, &earlier); err != nil {
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

// settled has nothing to do: the order is read from the pending entries themselves.
func (q *sqliteQueue) settled(context.Context, string, string) error { return nil }

// prune has nothing to do: consumers exist only through their pending entries.
func (q *sqliteQueue) prune(context.Context, time.Duration) (int, error) { return 0, nil }
