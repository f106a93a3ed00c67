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
		fresh, err := q.markSeenTx(ctx, tx, e.eventID, now)
		if err != nil || !fresh {
			return err // !fresh: a duplicate
		}
		if err := q.addDeadTx(ctx, tx, e, "", w, now); err != nil {
			return err
		}
		stored = true
		return nil
	})
	return stored, err
}
