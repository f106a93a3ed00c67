//go:build !serveronly

package service

import (
	"context"

	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/store"
)

// openSQLiteStore is the agent store in the SQLite state database at state.path; readiness
// pings the file.
func openSQLiteStore(ctx context.Context, cfg Config, srv *rpcserver.Server) (app.Store, func(), error) {
	db, err := sqlstate.Open(ctx, cfg.State.Path, sqlstate.Options{Sync: sqlstate.Sync(cfg.State.Sync), Logger: srv.Logger()})
	if err != nil {
		return nil, nil, err
	}
	st, err := store.NewSQLite(ctx, db)
	if err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	srv.AddReadiness("state", db.PingContext)
	return st, func() { _ = db.Close() }, nil
}
