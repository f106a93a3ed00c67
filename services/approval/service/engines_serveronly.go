//go:build serveronly

package service

import (
	"context"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

// openSQLite: SQLite is not linked into this build.
func openSQLite(context.Context, *Config, *domain.Keyring, []store.Option) (openedStore, error) {
	return openedStore{}, config.NotLinked(config.StateSQLite)
}

// openSQLiteGrants: SQLite is not linked into this build.
func openSQLiteGrants(context.Context, *Config, *rpcserver.Server, []byte) (app.GrantStore, func(), error) {
	return nil, nil, config.NotLinked(config.StateSQLite)
}

// openSQLiteReader: SQLite is not linked into this build.
func openSQLiteReader(context.Context, string) (app.AuditReader, func(), error) {
	return nil, nil, config.NotLinked(config.StateSQLite)
}
