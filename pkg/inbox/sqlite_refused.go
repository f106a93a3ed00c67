//go:build !serveronly

package inbox

import (
	"context"
	"database/sql"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
)

func (q *sqliteQueue) buryNew(ctx context.Context, e entry, w deadWhy) (bool, error) {
	stored := false
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		now := sqlstate.NowMS()
		r, err := q.exec(ctx, tx, sqlSeen, q.cfg.Stream, e.eventID, now+max(q.cfg.DedupeTTL.Milliseconds(), 1), now)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n == 0 {
			return err // a duplicate
		}
		var seq int64
		if err := q.row(ctx, tx, sqlNextDead, q.cfg.Stream).Scan(&seq); err != nil {
			return err
		}
		if _, err := q.exec(ctx, tx, sqlInsertDead, q.cfg.Stream, seq, now, e.eventID, e.key, e.payload, e.meta, "",
			w.reason, w.kind, w.attempts, e.mac); err != nil {
			return err
		}
		if cut := seq - q.cfg.MaxLen; cut > 0 {
			if _, err := q.exec(ctx, tx, sqlTrimDead, q.cfg.Stream, cut); err != nil {
				return err
			}
		}
		stored = true
		return nil
	})
	return stored, err
}
