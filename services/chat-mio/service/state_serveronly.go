//go:build serveronly

package service

import (
	"context"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
)

// openSQLiteState: SQLite is not linked into this build.
func openSQLiteState(context.Context, Config, *rpcserver.Server, jobid.Floor) (sessionStore, app.JobIDs, func(), error) {
	return nil, nil, nil, config.NotLinked(config.StateSQLite)
}
