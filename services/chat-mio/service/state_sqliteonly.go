//go:build sqliteonly

package service

import (
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
)

// openRedisState: Redis is not linked into this build.
func openRedisState(Config, *rpcserver.Server, jobid.Floor) (sessionStore, app.JobIDs, func(), error) {
	return nil, nil, nil, config.NotLinked("redis")
}
