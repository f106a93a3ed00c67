//go:build serveronly

package service_test

import (
	"context"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

// Built with -tags serveronly, gateway-line holds no SQLite: state.engine sqlite is refused under
// that key, naming the tag, before anything starts.
func TestServerOnlyRefusesSQLiteState(t *testing.T) {
	cfg := service.DefaultConfig()
	cfg.Line.ChannelSecret, cfg.Line.ChannelAccessToken = testSecret, testToken
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the server engines: %v", err)
	}
	cfg.State = config.State{Engine: config.StateSQLite, Path: t.TempDir() + "/state.db", Sync: "normal"}
	// Cancelled: were the choice let through, Run would return at once instead of serving.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := service.Run(ctx, cfg)
	if want := "state.engine: sqlite is not linked into this binary (built with -tags " + config.ServerOnlyTag; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run = %v, want an error containing %q", err, want)
	}
}
