package service

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Audit configures the tamper-evident audit log.
type Audit struct {
	// Key seals new events (HMAC-SHA256, at least 32 bytes); only from the environment, never
	// stored in the database.
	Key config.Secret `yaml:"-" env:"PICOCLAW_AUDIT_KEY"`
	// OldKeys are the keys Key replaced, comma separated: they still verify the events they sealed.
	OldKeys config.Secret `yaml:"-" env:"PICOCLAW_AUDIT_OLD_KEYS"`
	// RuntimeRole is the database role the service runs as, granted its privileges by the
	// migration over PICOCLAW_POSTGRES_MIGRATE_DSN; empty means the user of PICOCLAW_POSTGRES_DSN.
	RuntimeRole string `yaml:"runtime_role"`
	// VerifyInterval is how often the service verifies the whole log; 0 turns the check off.
	VerifyInterval time.Duration `yaml:"verify_interval"`
}

func (a Audit) validate(errs *config.Errors) {
	if !a.Key.Set() {
		errs.Addf("approval.audit.key", "must be set (env PICOCLAW_AUDIT_KEY, at least %d bytes, e.g. `openssl rand -hex 32`)", domain.MinAuditKeyBytes)
	} else if err := config.CheckSecret("PICOCLAW_AUDIT_KEY", a.Key.Value(), domain.MinAuditKeyBytes); err != nil {
		errs.Addf("approval.audit.key", "%v", err)
	} else if _, err := a.keyring(); err != nil {
		errs.Addf("approval.audit.key", "env PICOCLAW_AUDIT_KEY / PICOCLAW_AUDIT_OLD_KEYS: %v", err)
	}
	if a.VerifyInterval < 0 {
		errs.Addf("approval.audit.verify_interval", "must not be negative, got %s", a.VerifyInterval)
	}
	if strings.ContainsAny(a.RuntimeRole, "\x00") {
		errs.Addf("approval.audit.runtime_role", "invalid role name")
	}
}

func (a Audit) keyring() (*domain.Keyring, error) {
	var old [][]byte
	for _, k := range strings.Split(a.OldKeys.Value(), ",") {
		if k = strings.TrimSpace(k); k != "" {
			old = append(old, []byte(k))
		}
	}
	return domain.NewKeyring([]byte(strings.TrimSpace(a.Key.Value())), old...)
}

// AuditReport is the result of VerifyAudit.
type AuditReport = app.AuditReport

// AuditFinding is one problem VerifyAudit found.
type AuditFinding = domain.Finding

// Errors VerifyAudit returns, for callers to tell apart.
var (
	ErrAuditNotFound = domain.ErrNotFound
	ErrAuditInvalid  = domain.ErrInvalid
)

// VerifyAudit reads the configured audit store directly (no migration, nothing written) and
// verifies every job's chain, anchor and row, or only jobID's (the `picoclaw audit verify`
// command). Only the audit key settings and the store settings of cfg are used.
func VerifyAudit(ctx context.Context, cfg Config, jobID string) (AuditReport, error) {
	var errs config.Errors
	cfg.Approval.Audit.validate(&errs)
	switch cfg.Approval.Store {
	case StoreSQLite:
		if cfg.Approval.SQLitePath == "" {
			errs.Addf("approval.sqlite_path", "must be set when approval.store is sqlite")
		}
		errs.Add(config.CheckLinked("approval.store", cfg.Approval.Store))
	case StorePostgres:
		if !cfg.Postgres.DSN.Set() {
			errs.Addf("postgres.dsn", "must be set (env PICOCLAW_POSTGRES_DSN) when approval.store is postgres")
		}
	default:
		errs.Addf("approval.store", "must be postgres or sqlite, got %q", cfg.Approval.Store)
	}
	if err := errs.Err(); err != nil {
		return AuditReport{}, err
	}
	keys, err := cfg.Approval.Audit.keyring()
	if err != nil {
		return AuditReport{}, err
	}
	var r app.AuditReader
	switch cfg.Approval.Store {
	case StoreSQLite:
		s, closeStore, err := openSQLiteReader(ctx, cfg.Approval.SQLitePath)
		if err != nil {
			return AuditReport{}, err
		}
		defer closeStore()
		r = s
	default:
		s, closeStore, err := openPostgresReader(ctx, cfg.Postgres.DSN.Value())
		if err != nil {
			return AuditReport{}, err
		}
		defer closeStore()
		r = s
	}
	return app.VerifyAudit(ctx, r, keys, jobID)
}

// auditWatch is the periodic verification and its metrics.
type auditWatch struct {
	st        openedStore
	log       *slog.Logger
	tampered  prometheus.Gauge
	findings  prometheus.Gauge
	lastCheck prometheus.Gauge
	failures  prometheus.Counter
}

func newAuditWatch(reg prometheus.Registerer, st openedStore, log *slog.Logger) (*auditWatch, error) {
	w := &auditWatch{st: st, log: log,
		tampered: prometheus.NewGauge(prometheus.GaugeOpts{Name: "picoclaw_approval_audit_tampered_streams",
			Help: "Jobs and streams whose audit chain, anchor or row failed the last verification (0 = intact)."}),
		findings: prometheus.NewGauge(prometheus.GaugeOpts{Name: "picoclaw_approval_audit_findings",
			Help: "Problems found by the last verification of the audit log."}),
		lastCheck: prometheus.NewGauge(prometheus.GaugeOpts{Name: "picoclaw_approval_audit_last_verified_timestamp_seconds",
			Help: "When the audit log was last verified completely."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "picoclaw_approval_audit_verify_errors_total",
			Help: "Verifications of the audit log that could not complete (store unreachable)."}),
	}
	alterable := prometheus.NewGauge(prometheus.GaugeOpts{Name: "picoclaw_approval_audit_log_alterable",
		Help: "1 when the service's own database role could change or delete audit events (no separate migration role)."})
	for _, c := range []prometheus.Collector{w.tampered, w.findings, w.lastCheck, w.failures, alterable} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	if st.alterable {
		alterable.Set(1)
		log.Warn("approval.audit_log_alterable", slog.String("detail",
			"the service's database role can change or delete audit events; set PICOCLAW_POSTGRES_MIGRATE_DSN to an owner role and PICOCLAW_POSTGRES_DSN to a role of its own"))
	}
	return w, nil
}

// run verifies the log now and every interval until ctx ends.
func (w *auditWatch) run(ctx context.Context, every time.Duration) {
	app.AuditWatch(ctx, w.st.audit, w.st.keys, every, w.log, func(rep app.AuditReport, err error) {
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				w.failures.Inc()
			}
			return
		}
		w.tampered.Set(float64(len(rep.Tampered)))
		w.findings.Set(float64(len(rep.Findings)))
		w.lastCheck.SetToCurrentTime()
	})
}
