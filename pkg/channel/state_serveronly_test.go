//go:build serveronly

package channel

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
)

// Built with -tags serveronly, the channel runtime holds no SQLite: a gateway whose validation
// let state.engine sqlite through still opens nothing and names the tag.
func TestServerOnlyStateRefusesSQLite(t *testing.T) {
	cfg := config.Common{State: config.State{Engine: config.StateSQLite, Path: t.TempDir() + "/state.db", Sync: "normal"}}
	st, err := openState(context.Background(), cfg, time.UTC, nil, slog.New(slog.DiscardHandler), tracenoop.NewTracerProvider())
	if want := "sqlite is not linked into this binary (built with -tags " + config.ServerOnlyTag; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("openState = %v, want an error containing %q", err, want)
	}
	if st.engine != nil || st.close != nil {
		t.Fatalf("openState opened %+v", st)
	}
}
