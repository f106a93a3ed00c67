//go:build !sqliteonly

package channel

import (
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid/redisalloc"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry/redistrace"
)

// openRedisState is the gateway state on Redis.
func openRedisState(cfg config.Common, loc *time.Location, floor jobid.Floor, log *slog.Logger, tp trace.TracerProvider) (state, error) {
	rdb := redis.NewClient(&redis.Options{Addr: cfg.Redis.Addr, DB: cfg.Redis.DB, Password: cfg.Redis.Password.Value()})
	if err := redistrace.Instrument(rdb, tp); err != nil {
		_ = rdb.Close()
		return state{}, err
	}
	return state{engine: inbox.RedisEngine(rdb), name: "redis", where: "redis " + cfg.Redis.Addr,
		jobs:  redisalloc.New(rdb, loc, cfg.Redis.KeyPrefix, redisalloc.WithLogger(log), jobid.WithFloor(floor)),
		close: func() { _ = rdb.Close() }}, nil
}
