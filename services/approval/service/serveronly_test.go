//go:build serveronly

package service_test

import (
	"context"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/service"
)

// Built with -tags serveronly, approval holds no SQLite: an audit log (approval.store) or a
// grant store (state.engine) on SQLite is refused under its key, naming the tag, before
// anything starts, and so is reading or migrating an SQLite audit log.
func TestServerOnlyRefusesSQLite(t *testing.T) {
	server := func() service.Config {
		cfg := service.DefaultConfig()
		cfg.Auth = testinfra.Auth(service.Name)
		cfg.Postgres.DSN = "postgres://approval@127.0.0.1:1/audit"
		cfg.Approval.Audit.Key = testAuditKey
		return cfg
	}
	if cfg := server(); cfg.Validate() != nil {
		t.Fatalf("the server engines: %v", cfg.Validate())
	}
	refused := func(t *testing.T, what string, err error, key string) {
		t.Helper()
		if want := key + ": sqlite is not linked into this binary (built with -tags " + config.ServerOnlyTag; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s = %v, want an error containing %q", what, err, want)
		}
	}
	// Cancelled: were the choice let through, Run would return at once instead of serving.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	t.Run("approval.store", func(t *testing.T) {
		cfg := server()
		cfg.Approval.Store, cfg.Approval.SQLitePath = service.StoreSQLite, dir+"/audit.db"
		refused(t, "Run", service.Run(ctx, cfg), "approval.store")
		refused(t, "Migrate", service.Migrate(ctx, cfg), "approval.store")
		_, err := service.VerifyAudit(ctx, cfg, "")
		refused(t, "VerifyAudit", err, "approval.store")
	})
	t.Run("state.engine", func(t *testing.T) {
		cfg := server()
		cfg.State = config.State{Engine: config.StateSQLite, Path: dir + "/state.db", Sync: "normal"}
		refused(t, "Run", service.Run(ctx, cfg), "state.engine")
	})
}
