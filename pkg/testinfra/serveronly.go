package testinfra

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
)

// RefusesSQLiteState checks a service built with -tags serveronly: its configuration is valid on
// the server engines, and with state set to SQLite, run refuses it under the key state.engine,
// naming the tag, before anything starts (run gets a cancelled context: a choice let through would
// return at once instead of serving).
func RefusesSQLiteState(t testing.TB, state *config.State, validate func() error, run func(context.Context) error) {
	t.Helper()
	if err := validate(); err != nil {
		t.Fatalf("the server engines: %v", err)
	}
	*state = config.State{Engine: config.StateSQLite, Path: filepath.Join(t.TempDir(), "state.db"), Sync: "normal"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := run(ctx)
	if want := "state.engine: sqlite is not linked into this binary (built with -tags " + config.ServerOnlyTag; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run = %v, want an error containing %q", err, want)
	}
}
