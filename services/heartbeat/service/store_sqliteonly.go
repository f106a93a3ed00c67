//go:build sqliteonly

package service

import (
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/app"
)

// openRedisStore: Redis is not linked into this build.
func openRedisStore(Config, *rpcserver.Server) (app.Store, func(), error) {
	return nil, nil, config.NotLinked("redis")
}
