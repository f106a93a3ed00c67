//go:build !serveronly

package service

import (
	"context"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid/sqlitealloc"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/store"
)

// openSQLiteState is the session store and the JobID allocator in the SQLite state database at
// state.path; readiness pings the file.
func openSQLiteState(ctx context.Context, cfg Config, srv *rpcserver.Server, floor jobid.Floor) (sessionStore, app.JobIDs, func(), error) {
	log, loc := srv.Logger(), srv.Location()
	db, err := sqlstate.Open(ctx, cfg.State.Path, sqlstate.Options{Sync: sqlstate.Sync(cfg.State.Sync), Logger: log})
	if err != nil {
		return nil, nil, nil, err
	}
	sessions, err := store.NewSQLite(ctx, db, cfg.Chat.SessionTTL)
	var jobs app.JobIDs
	if err == nil {
		jobs, err = sqlitealloc.New(ctx, db, loc, jobid.WithLogger(log), jobid.WithFloor(floor))
	}
	if err != nil {
		_ = db.Close()
		return nil, nil, nil, err
	}
	srv.AddReadiness("state", db.PingContext)
	return sessions, jobs, func() { _ = db.Close() }, nil
}
