//go:build !sqliteonly

package service

import (
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid/redisalloc"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry/redistrace"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/store"
)

// openRedisState is the session store and the JobID allocator on Redis.
func openRedisState(cfg Config, srv *rpcserver.Server, floor jobid.Floor) (sessionStore, app.JobIDs, func(), error) {
	log, loc := srv.Logger(), srv.Location()
	rdb := redis.NewClient(&redis.Options{Addr: cfg.Redis.Addr, DB: cfg.Redis.DB, Password: cfg.Redis.Password.Value(),
		DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second, MaxRetries: 1,
		// A reply must not wait long on a Redis that is down: the session is then treated as new.
		DialerRetries: 1})
	if err := redistrace.Instrument(rdb, srv.Telemetry().TracerProvider); err != nil {
		_ = rdb.Close()
		return nil, nil, nil, err
	}
	sessions := store.NewRedis(rdb, cfg.Redis.KeyPrefix, cfg.Chat.SessionTTL)
	srv.AddReadiness("redis", sessions.Ping)
	// A counter lost with Redis (a flush, a restart without persistence) starts above the audit
	// store's ids of the day.
	return sessions, redisalloc.New(rdb, loc, cfg.Redis.KeyPrefix, redisalloc.WithLogger(log), jobid.WithFloor(floor)),
		func() { _ = rdb.Close() }, nil
}
