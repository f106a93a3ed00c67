//go:build !sqliteonly

package service

import (
	"context"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

// openPostgres is the audit store on Postgres; opening applies pending migrations.
func openPostgres(ctx context.Context, c *Config, keys *domain.Keyring, opts []store.Option) (openedStore, error) {
	if c.Postgres.MigrateDSN.Set() {
		opts = append(opts, store.WithMigrateDSN(c.Postgres.MigrateDSN.Value()), store.WithRuntimeRole(c.Approval.Audit.RuntimeRole))
	}
	s, err := store.OpenPostgres(ctx, c.Postgres.DSN.Value(), opts...)
	if err != nil {
		return openedStore{}, err
	}
	return openedStore{Store: s, audit: s, leases: s, images: s, keys: keys, alterable: s.LogAlterable(), ping: s.Ping, close: s.Close}, nil
}

// openRedisGrants is the Auto-Approve grant store on Redis.
func openRedisGrants(c *Config, srv *rpcserver.Server, seal []byte) (app.GrantStore, func(), error) {
	rdb := store.NewRedisClient(store.RedisOptions{Addr: c.Redis.Addr, DB: c.Redis.DB, Password: c.Redis.Password.Value(),
		DialTimeout: 2 * time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
		TracerProvider: srv.Telemetry().TracerProvider})
	return store.NewRedisGrants(rdb, c.Redis.KeyPrefix, seal, srv.Logger()), func() { _ = rdb.Close() }, nil
}

// openPostgresReader opens the Postgres audit store read-only.
func openPostgresReader(ctx context.Context, dsn string) (app.AuditReader, func(), error) {
	s, err := store.OpenPostgres(ctx, dsn, store.ReadOnly())
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}
