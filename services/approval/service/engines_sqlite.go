//go:build !serveronly

package service

import (
	"context"

	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

// openSQLite is the audit store in the SQLite file at approval.sqlite_path; opening applies
// pending migrations.
func openSQLite(ctx context.Context, c *Config, keys *domain.Keyring, opts []store.Option) (openedStore, error) {
	s, err := store.OpenSQLite(ctx, c.Approval.SQLitePath, opts...)
	if err != nil {
		return openedStore{}, err
	}
	return openedStore{Store: s, audit: s, leases: s, images: s, keys: keys, ping: s.Ping, close: func() { _ = s.Close() }}, nil
}

// openSQLiteGrants is the Auto-Approve grant store in the SQLite state database at state.path
// (no Redis client at all then); readiness pings the file.
func openSQLiteGrants(ctx context.Context, c *Config, srv *rpcserver.Server, seal []byte) (app.GrantStore, func(), error) {
	db, err := sqlstate.Open(ctx, c.State.Path, sqlstate.Options{Sync: sqlstate.Sync(c.State.Sync), Logger: srv.Logger()})
	if err != nil {
		return nil, nil, err
	}
	g, err := store.NewSQLiteGrants(ctx, db, seal, srv.Logger())
	if err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	srv.AddReadiness("state", db.PingContext)
	return g, func() { _ = db.Close() }, nil
}

// openSQLiteReader opens the SQLite audit store read-only.
func openSQLiteReader(ctx context.Context, path string) (app.AuditReader, func(), error) {
	s, err := store.OpenSQLite(ctx, path, store.ReadOnly())
	if err != nil {
		return nil, nil, err
	}
	return s, func() { _ = s.Close() }, nil
}
