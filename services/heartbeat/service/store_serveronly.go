//go:build serveronly

package service

import (
	"context"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/app"
)

// openSQLiteStore: SQLite is not linked into this build.
func openSQLiteStore(context.Context, Config, *rpcserver.Server) (app.Store, func(), error) {
	return nil, nil, config.NotLinked(config.StateSQLite)
}
