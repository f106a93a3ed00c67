//go:build serveronly

package channel

import (
	"context"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// openSQLiteState: SQLite is not linked into this build.
func openSQLiteState(context.Context, config.Common, *time.Location, jobid.Floor, *slog.Logger) (state, error) {
	return state{}, config.NotLinked(config.StateSQLite)
}
