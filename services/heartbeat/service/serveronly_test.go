//go:build serveronly

package service_test

import (
	"context"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/service"
)

// Built with -tags serveronly, heartbeat holds no SQLite: state.engine sqlite is refused under
// that key, naming the tag, before anything starts.
func TestServerOnlyRefusesSQLiteState(t *testing.T) {
	cfg := service.DefaultConfig()
	cfg.Auth = testinfra.Auth(service.Name)
	testinfra.RefusesSQLiteState(t, &cfg.State, cfg.Validate, func(ctx context.Context) error { return service.Run(ctx, cfg) })
}
