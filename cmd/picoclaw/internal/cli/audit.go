package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	approval "github.com/picoclaw-suite/picoclaw/services/approval/service"
)

// auditKeyFile is where the embedded suite keeps its generated audit key, under its data directory.
var auditKeyFile = filepath.Join("credentials", "audit.key")

// loginTokenFile is the embedded suite's REST and console token for the terminal user, under
// its data directory.
var loginTokenFile = filepath.Join("credentials", "login.token")

// newAuditCmd is `picoclaw audit verify`: it reads the audit database itself, with the audit
// key, rather than asking the approval service, so it works while the service is down and does
// not trust the process whose log it checks.
func newAuditCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use: "audit", Short: "verify the audit log: chains, anchors and job rows (reads the database with the audit key)",
		Args: groupArgs, RunE: groupRun,
	}
	var o auditOptions
	verify := &cobra.Command{
		Use: "verify [--job ID] [--data DIR | --sqlite FILE]", Short: "verify every chain, its anchor in the job row, and the row against the events",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.sqlitePath == "" && flagChanged(cmd.Flags(), "data") {
				o.sqlitePath = filepath.Join(o.dataDir, "audit.db")
			}
			o.dataDir = g.dataDirOr(o.dataDir)
			return runAuditVerify(cmd.Context(), g, o)
		},
	}
	f := verify.Flags()
	f.StringVar(&o.job, "job", "", "verify only this job (default: every job and stream)")
	f.StringVar(&o.dataDir, "data", "", dataFlagUsage+"; used when no Postgres DSN is set")
	f.StringVar(&o.sqlitePath, "sqlite", "", "verify this SQLite audit database")
	o.output.register(verify)
	_ = verify.MarkFlagDirname("data")
	_ = verify.MarkFlagFilename("sqlite", "db")
	cmd.AddCommand(verify)
	return cmd
}

type auditOptions struct {
	job, dataDir, sqlitePath string
	output                   outputFlag
}

func runAuditVerify(ctx context.Context, g *globals, o auditOptions) error {
	jsonOut, err := o.output.isJSON()
	if err != nil {
		return err
	}
	cfg, err := auditConfig(g, o.dataDir, o.sqlitePath)
	if err != nil {
		return err
	}
	rep, err := approval.VerifyAudit(ctx, cfg, o.job)
	switch {
	case errors.Is(err, approval.ErrAuditNotFound), errors.Is(err, fs.ErrNotExist):
		return failureOver(ExitNotFound, err, txtAuditNotFound, err.Error())
	case errors.Is(err, approval.ErrAuditInvalid):
		return &usageError{texts.Wrap(nil, err, txtAuditSetup, err.Error())}
	case err != nil:
		return failureOver(ExitError, err, txtAuditSetup, err.Error())
	}
	if jsonOut {
		enc := json.NewEncoder(g.io.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		for _, f := range rep.Findings {
			fmt.Fprintf(g.io.Out, "%s %s\n", msg(g.locale, "改ざん", "TAMPERED"), f)
		}
		fmt.Fprintf(g.io.Out, msg(g.locale, "監査ログ: ジョブとストリーム %d 件、イベント %d 件を検証、問題 %d 件\n",
			"audit log: %d jobs and streams, %d events verified, %d findings\n"), rep.Streams, rep.Events, len(rep.Findings))
	}
	if !rep.OK() {
		return failure(ExitTampered, txtAuditTampered, len(rep.Tampered), rep.Streams)
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
			return cfg, &apiError{code: ExitError, err: configReadError(g.cfgPath, err)}
		}
		if err := config.Decode(data, &cfg); err != nil {
			return cfg, failureOver(ExitError, err, txtConfigDecode, g.cfgPath, err.Error())
		}
	}
	if err := config.ApplyEnv(&cfg, g.lookupEnv()); err != nil {
		return cfg, failureOver(ExitError, err, txtConfigInvalid, err.Error())
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
