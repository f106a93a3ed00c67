//go:build !sqliteonly

package service

import (
	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry/redistrace"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/store"
)

// openRedisStore is the agent store on Redis.
func openRedisStore(cfg Config, srv *rpcserver.Server) (app.Store, func(), error) {
	rdb := redis.NewClient(&redis.Options{Addr: cfg.Redis.Addr, DB: cfg.Redis.DB, Password: cfg.Redis.Password.Value()})
	if err := redistrace.Instrument(rdb, srv.Telemetry().TracerProvider); err != nil {
		_ = rdb.Close()
		return nil, nil, err
	}
	st := store.NewRedis(rdb, cfg.Redis.KeyPrefix)
	srv.AddReadiness("redis", st.Ping)
	return st, func() { _ = rdb.Close() }, nil
}
