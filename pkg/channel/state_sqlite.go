//go:build !serveronly

package channel

import (
	"context"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid/sqlitealloc"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
)

// openSQLiteState is the gateway state in the SQLite state database at state.path.
func openSQLiteState(ctx context.Context, cfg config.Common, loc *time.Location, floor jobid.Floor, log *slog.Logger) (state, error) {
	db, err := sqlstate.Open(ctx, cfg.State.Path, sqlstate.Options{Sync: sqlstate.Sync(cfg.State.Sync), Logger: log})
	if err != nil {
		return state{}, err
	}
	e, err := inbox.SQLiteEngine(ctx, db)
	if err != nil {
		_ = db.Close()
		return state{}, err
	}
	jobs, err := sqlitealloc.New(ctx, db, loc, jobid.WithLogger(log), jobid.WithFloor(floor))
	if err != nil {
		_ = db.Close()
		return state{}, err
	}
	return state{engine: e, jobs: jobs, name: "sqlite", where: "state database " + db.Path(), close: func() { _ = db.Close() }}, nil
}
