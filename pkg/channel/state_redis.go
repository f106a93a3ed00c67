//go:build !sqliteonly

package channel

import (
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid/redisalloc"
)

// openRedisState is the gateway state on Redis.
func openRedisState(cfg config.Common, loc *time.Location, floor jobid.Floor, log *slog.Logger) (state, error) {
	rdb := redis.NewClient(&redis.Options{Addr: cfg.Redis.Addr, DB: cfg.Redis.DB, Password: cfg.Redis.Password.Value()})
	return state{engine: inbox.RedisEngine(rdb), name: "redis", where: "redis " + cfg.Redis.Addr,
		jobs:  redisalloc.New(rdb, loc, cfg.Redis.KeyPrefix, redisalloc.WithLogger(log), jobid.WithFloor(floor)),
		close: func() { _ = rdb.Close() }}, nil
}
