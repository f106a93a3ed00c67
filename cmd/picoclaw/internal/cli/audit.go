package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	approval "github.com/picoclaw-suite/picoclaw/services/approval/service"
)

// auditKeyFile is where the embedded suite keeps its generated audit key, under its data directory.
var auditKeyFile = filepath.Join("credentials", "audit.key")

// runAudit is `picoclaw audit verify`: it reads the audit database itself, with the audit key,
// rather than asking the approval service, so it works while the service is down and does not
// trust the process whose log it checks.
func runAudit(ctx context.Context, g *globals, args []string) error {
	use := commands()["audit"].usage
	if len(args) == 0 || args[0] != "verify" {
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
			fmt.Fprintf(g.io.Out, "usage: picoclaw %s\n", use)
			return nil
		}
		return usagef("expected the subcommand verify")
	}
	flags := newFlags(g, "audit verify", use)
	job := flags.String("job", "", "verify only this job (default: every job and stream)")
	dataDir := flags.String("data", "data", "the embedded suite's data directory (used when no Postgres DSN is set)")
	sqlitePath := flags.String("sqlite", "", "verify this SQLite audit database")
	jsonOut := flags.Bool("json", false, "print the report as JSON")
	pos, err := parseInterspersed(flags, args[1:])
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *sqlitePath == "" {
		flags.Visit(func(f *flag.Flag) {
			if f.Name == "data" {
				*sqlitePath = filepath.Join(*dataDir, "audit.db")
			}
		})
	}
	cfg, err := auditConfig(g, *dataDir, *sqlitePath)
	if err != nil {
		return err
	}
	rep, err := approval.VerifyAudit(ctx, cfg, *job)
	switch {
	case errors.Is(err, approval.ErrAuditNotFound), errors.Is(err, fs.ErrNotExist):
		return &apiError{code: ExitNotFound, msg: err.Error()}
	case errors.Is(err, approval.ErrAuditInvalid):
		return usagef("%v", err)
	case err != nil:
		return err
	}
	if *jsonOut {
		enc := json.NewEncoder(g.io.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		for _, f := range rep.Findings {
			fmt.Fprintf(g.io.Out, "TAMPERED %s\n", f)
		}
		fmt.Fprintf(g.io.Out, "%s: %d jobs and streams, %d events verified, %d findings\n",
			msg(g.locale, "監査ログ", "audit log"), rep.Streams, rep.Events, len(rep.Findings))
	}
	if !rep.OK() {
		return &apiError{code: ExitTampered, msg: fmt.Sprintf("tampering detected in %d of %d jobs and streams", len(rep.Tampered), rep.Streams)}
	}
	return nil
}

// auditConfig finds the audit store and key: --sqlite (or --data), else approval.store sqlite from the
// config, else Postgres when PICOCLAW_POSTGRES_DSN is set, else the embedded suite's
// <data>/audit.db. The key comes from PICOCLAW_AUDIT_KEY, or for SQLite from the generated
// credentials/audit.key beside the database.
func auditConfig(g *globals, dataDir, sqlitePath string) (approval.Config, error) {
	cfg := approval.DefaultConfig()
	if g.cfgPath != "" {
		data, err := os.ReadFile(g.cfgPath)
		if err != nil {
			return cfg, fmt.Errorf("read config: %w", err)
		}
		if err := config.Decode(data, &cfg); err != nil {
			return cfg, fmt.Errorf("config %s: %w", g.cfgPath, err)
		}
	}
	lookup := func(k string) (string, bool) { v := g.io.Getenv(k); return v, v != "" }
	if err := config.ApplyEnv(&cfg, lookup); err != nil {
		return cfg, err
	}
	switch {
	case sqlitePath != "":
		cfg.Approval.Store, cfg.Approval.SQLitePath = approval.StoreSQLite, sqlitePath
	case cfg.Approval.Store == approval.StoreSQLite:
	case cfg.Postgres.DSN.Set():
		cfg.Approval.Store = approval.StorePostgres
	default:
		cfg.Approval.Store, cfg.Approval.SQLitePath = approval.StoreSQLite, filepath.Join(dataDir, "audit.db")
	}
	if cfg.Approval.Store == approval.StoreSQLite && !cfg.Approval.Audit.Key.Set() {
		key, err := readSecret(filepath.Join(filepath.Dir(cfg.Approval.SQLitePath), auditKeyFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return cfg, err
		}
		cfg.Approval.Audit.Key = config.Secret(key)
	}
	return cfg, nil
}
