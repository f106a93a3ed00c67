//go:build sqliteonly

package channel

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// openRedisState: Redis is not linked into this build.
func openRedisState(config.Common, *time.Location, jobid.Floor, *slog.Logger, trace.TracerProvider) (state, error) {
	return state{}, config.NotLinked("redis")
}
