//go:build sqliteonly

package service

import (
	"context"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

// openPostgres: the Postgres driver is not linked into this build.
func openPostgres(context.Context, *Config, *domain.Keyring, []store.Option) (openedStore, error) {
	return openedStore{}, config.NotLinked("postgres")
}

// openRedisGrants: Redis is not linked into this build.
func openRedisGrants(*Config, *rpcserver.Server, []byte) (app.GrantStore, func(), error) {
	return nil, nil, config.NotLinked("redis")
}

// openPostgresReader: the Postgres driver is not linked into this build.
func openPostgresReader(context.Context, string) (app.AuditReader, func(), error) {
	return nil, nil, config.NotLinked("postgres")
}
