//go:build serveronly

package service_test

import (
	"context"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/service"
)

// Built with -tags serveronly, chat-mio holds no SQLite: state.engine sqlite is refused under
// that key, naming the tag, before anything starts.
func TestServerOnlyRefusesSQLiteState(t *testing.T) {
	cfg := service.DefaultConfig()
	testinfra.RefusesSQLiteState(t, &cfg.State, cfg.Validate, func(ctx context.Context) error { return service.Run(ctx, cfg) })
}
