//go:build serveronly

package service_test

import (
	"context"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

// Built with -tags serveronly, gateway-line holds no SQLite: state.engine sqlite is refused under
// that key, naming the tag, before anything starts.
func TestServerOnlyRefusesSQLiteState(t *testing.T) {
	cfg := service.DefaultConfig()
	cfg.Line.ChannelSecret, cfg.Line.ChannelAccessToken = testSecret, testToken
	testinfra.RefusesSQLiteState(t, &cfg.State, cfg.Validate, func(ctx context.Context) error { return service.Run(ctx, cfg) })
}
