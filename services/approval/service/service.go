// Package service is the public entry point of approval: content-bound approvals, Auto-Approve policy and the audit log.
package service

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/httpapi"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/notify"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/policy"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/promstats"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/rpc"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/ui"
)

// Name is the service name used in logs, traces, metrics and health checks.
const Name = "approval"

// Store kinds.
const (
	StorePostgres = "postgres"
	StoreSQLite   = "sqlite"
)

// Config is the configuration of approval.
type Config struct {
	config.Common `yaml:",inline"`

	Postgres config.Postgres `yaml:"postgres"`
	Approval Approval        `yaml:"approval"`
	// Images: whether the bytes of recorded images are kept, and where.
	Images config.Images `yaml:"images"`

	// Wiring: listeners, log writer and telemetry handed over by tests and the embedded suite.
	rpcserver.Wiring `yaml:"-"`
}

// Approval is the approval section of the suite's config file.
type Approval struct {
	PendingTTL          time.Duration `yaml:"pending_ttl"`
	SweepInterval       time.Duration `yaml:"sweep_interval"`
	BroadOverwriteFiles int           `yaml:"broad_overwrite_files"`
	CostLimitUSD        float64       `yaml:"cost_limit_usd"`
	TokenLimit          int64         `yaml:"token_limit"`
	Approvers           Approvers     `yaml:"approvers"`
	// BotIDs are the bot's own identities on LINE/Slack; they never approve.
	BotIDs   []string `yaml:"bot_ids"`
	HardDeny HardDeny `yaml:"hard_deny"`
	// ConsoleURL is the console's address as approvers reach it (e.g. https://picoclaw.example/ui);
	// when set, every approval request links to its job there.
	ConsoleURL string `yaml:"console_url"`
	// PolicyFile is the YAML policy (config/policy.yaml is the default); empty uses the
	// built-in copy of the default.
	PolicyFile  string      `yaml:"policy_file"`
	AutoApprove AutoApprove `yaml:"auto_approve"`
	Store       string      `yaml:"store"`
	SQLitePath  string      `yaml:"sqlite_path"`
	Audit       Audit       `yaml:"audit"`

	// ClaimLease is how long an executor's claim holds without a renewal; after that another
	// executor may take the job over (the holder renews at a third of it).
	ClaimLease time.Duration `yaml:"claim_lease"`
}

// Approvers is the allowlist. Empty means nobody may approve.
type Approvers struct {
	Line  []string `yaml:"line"`
	Slack []string `yaml:"slack"`
	CLI   []string `yaml:"cli"`
	// Tokens are REST bearer tokens as "name:token,name2:token2", only from the environment.
	Tokens config.Secret `yaml:"-" env:"PICOCLAW_APPROVAL_TOKENS"`
}

// HardDeny lists what is refused outright.
type HardDeny struct {
	Paths    []string `yaml:"paths"`
	Commands []string `yaml:"commands"`
}

// AutoApprove configures the Auto-Approve grant.
type AutoApprove struct {
	// Enabled allows switching Auto-Approve on at all; off by default.
	Enabled    bool          `yaml:"enabled"`
	DefaultTTL time.Duration `yaml:"default_ttl"`
	MaxTTL     time.Duration `yaml:"max_ttl"`
	// DefaultScope is the scope of a bare `/auto-approve on` (no tasks=, paths=, routes= or ops=).
	DefaultScope GrantScope `yaml:"default_scope"`
}

// GrantScope limits what an Auto-Approve grant covers.
type GrantScope struct {
	Tasks  []string `yaml:"tasks"`
	Paths  []string `yaml:"paths"`
	Routes []string `yaml:"routes"`
}

// DefaultConfig returns the defaults of the spec.
func DefaultConfig() Config {
	return Config{
		Common: config.DefaultCommon(),
		Images: config.DefaultImages(),
		Approval: Approval{
			PendingTTL: 30 * time.Minute, SweepInterval: 30 * time.Second, ClaimLease: domain.DefaultLeaseTTL, BroadOverwriteFiles: 10,
			CostLimitUSD: 1.0, TokenLimit: 100000,
			HardDeny: HardDeny{
				Paths:    []string{".git"},
				Commands: []string{`\brm\s+-[a-zA-Z]*r[a-zA-Z]*f?\s+(/|~)(\s|$)`, `\bmkfs(\.\w+)?\b`, `\bdd\s+.*\bof=/dev/`, `:\(\)\s*\{\s*:\|:&\s*\};:`},
			},
			AutoApprove: AutoApprove{Enabled: false, DefaultTTL: 60 * time.Minute, MaxTTL: 24 * time.Hour,
				DefaultScope: GrantScope{Tasks: []string{"docs", "review"}, Paths: []string{"docs/", "README.md"}}},
			Store:      StorePostgres,
			SQLitePath: "data/audit.db",
			Audit:      Audit{VerifyInterval: 10 * time.Minute},
		},
	}
}

// Validate checks the configuration and names the offending key.
func (c *Config) Validate() error {
	var errs config.Errors
	errs.Add(c.Common.Validate())
	errs.Add(config.CheckLinked("state.engine", c.State.Engine))
	a := c.Approval
	if a.PendingTTL <= 0 {
		errs.Addf("approval.pending_ttl", "must be positive, got %s", a.PendingTTL)
	}
	if a.SweepInterval <= 0 {
		errs.Addf("approval.sweep_interval", "must be positive, got %s", a.SweepInterval)
	}
	if a.ClaimLease < 3*time.Second {
		errs.Addf("approval.claim_lease", "must be at least 3s (the executor renews at a third of it), got %s", a.ClaimLease)
	}
	if a.BroadOverwriteFiles <= 0 {
		errs.Addf("approval.broad_overwrite_files", "must be positive, got %d", a.BroadOverwriteFiles)
	}
	if a.CostLimitUSD < 0 {
		errs.Addf("approval.cost_limit_usd", "must not be negative")
	}
	if a.TokenLimit < 0 {
		errs.Addf("approval.token_limit", "must not be negative")
	}
	if a.AutoApprove.MaxTTL <= 0 {
		errs.Addf("approval.auto_approve.max_ttl", "must be positive, got %s", a.AutoApprove.MaxTTL)
	}
	if a.AutoApprove.DefaultTTL <= 0 || a.AutoApprove.DefaultTTL > a.AutoApprove.MaxTTL {
		errs.Addf("approval.auto_approve.default_ttl", "must be positive and at most max_ttl (%s), got %s", a.AutoApprove.MaxTTL, a.AutoApprove.DefaultTTL)
	}
	if u, err := url.Parse(a.ConsoleURL); a.ConsoleURL != "" && (err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "") {
		errs.Addf("approval.console_url", "must be an http(s) URL, got %q", a.ConsoleURL)
	}
	if err := app.ValidateScope(app.GrantInput{TaskTypes: a.AutoApprove.DefaultScope.Tasks, PathPrefixes: a.AutoApprove.DefaultScope.Paths,
		Routes: a.AutoApprove.DefaultScope.Routes}); err != nil {
		errs.Addf("approval.auto_approve.default_scope", "%v", err)
	}
	for i, expr := range a.HardDeny.Commands {
		if _, err := regexp.Compile(expr); err != nil {
			errs.Addf(fmt.Sprintf("approval.hard_deny.commands[%d]", i), "invalid regular expression: %v", err)
		}
	}
	if a.PolicyFile != "" {
		if _, err := policy.Load(a.PolicyFile); err != nil {
			errs.Addf("approval.policy_file", "%v", err)
		}
	}
	errs.Add(c.Services.Approval.ValidatePublic(Name))
	for _, pair := range strings.Split(c.Approval.Approvers.Tokens.Value(), ",") {
		if _, token, ok := strings.Cut(strings.TrimSpace(pair), ":"); ok {
			if err := config.CheckSecret("PICOCLAW_APPROVAL_TOKENS", strings.TrimSpace(token), config.MinSecretBytes); err != nil {
				errs.Addf("approval.approvers.tokens", "%v", err)
			}
		}
	}
	if _, err := domain.NewApprovers(c.approverConfig()); err != nil {
		errs.Addf("approval.approvers.tokens", "env PICOCLAW_APPROVAL_TOKENS: %v", err)
	}
	switch a.Store {
	case StorePostgres:
		if !c.Postgres.DSN.Set() {
			errs.Addf("postgres.dsn", "must be set (env PICOCLAW_POSTGRES_DSN) when approval.store is postgres")
		}
	case StoreSQLite:
		if a.SQLitePath == "" {
			errs.Addf("approval.sqlite_path", "must be set when approval.store is sqlite")
		}
		errs.Add(config.CheckLinked("approval.store", a.Store))
	default:
		errs.Addf("approval.store", "must be postgres or sqlite, got %q", a.Store)
	}
	c.Approval.Audit.validate(&errs)
	errs.Add(c.Images.Validate())
	errs.Add(c.Images.ValidateKeep())
	return errs.Err()
}

func (c *Config) approverConfig() domain.ApproverConfig {
	return domain.ApproverConfig{Line: c.Approval.Approvers.Line, Slack: c.Approval.Approvers.Slack, CLI: c.Approval.Approvers.CLI,
		RESTTokens: c.Approval.Approvers.Tokens.Value(), BotIDs: c.Approval.BotIDs}
}

type openedStore struct {
	app.Store
	audit     app.AuditReader
	leases    app.Leases
	images    app.ImageLog
	keys      *domain.Keyring
	alterable bool
	ping      func(context.Context) error
	close     func()
}

// openStore connects to the configured store; opening applies pending migrations.
func openStore(ctx context.Context, c *Config, opts ...store.Option) (openedStore, error) {
	keys, err := c.Approval.Audit.keyring()
	if err != nil {
		return openedStore{}, err
	}
	opts = append(opts, store.WithKeyring(keys))
	switch c.Approval.Store {
	case StoreSQLite:
		return openSQLite(ctx, c, keys, opts)
	default:
		return openPostgres(ctx, c, keys, opts)
	}
}

// Migrate applies pending database migrations and returns (the `migrate` subcommand).
func Migrate(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	s, err := openStore(ctx, &cfg)
	if err != nil {
		return err
	}
	s.close()
	return nil
}

// openGrants opens the Auto-Approve grant store on the configured state engine: Redis, or the
// embedded SQLite file (no Redis client at all then, and readiness checks the file).
func openGrants(ctx context.Context, c *Config, srv *rpcserver.Server) (app.GrantStore, func(), error) {
	seal := store.GrantSealKey([]byte(strings.TrimSpace(c.Approval.Audit.Key.Value())))
	if c.State.SQLite() {
		return openSQLiteGrants(ctx, c, srv, seal)
	}
	return openRedisGrants(c, srv, seal)
}

// Run serves approval until ctx is cancelled.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	// REST and the console are a public surface of their own; the Connect API stays internal.
	// chat-mio sends each image it records (images.max_bytes) in the request.
	srv, err := rpcserver.Start(ctx, rpcserver.Setup{Name: Name, Common: cfg.Common, Public: true, Wiring: cfg.Wiring,
		MaxBodyBytes: cfg.Images.MaxBytes + 1<<20})
	if err != nil {
		return err
	}
	log := srv.Logger()
	abort := func(err error) error { return srv.Abort(ctx, err) }
	st, err := openStore(ctx, &cfg, store.WithTracing(srv.Telemetry().TracerProvider))
	if err != nil {
		return abort(err)
	}
	defer st.close()
	grants, closeGrants, err := openGrants(ctx, &cfg, srv)
	if err != nil {
		return abort(err)
	}
	defer closeGrants()
	approvers, err := domain.NewApprovers(cfg.approverConfig())
	if err != nil {
		return abort(err)
	}
	loc := srv.Location()
	hardDeny := make([]*regexp.Regexp, 0, len(cfg.Approval.HardDeny.Commands))
	for _, expr := range cfg.Approval.HardDeny.Commands {
		re, err := regexp.Compile(expr)
		if err != nil {
			return abort(fmt.Errorf("approval.hard_deny.commands: %w", err))
		}
		hardDeny = append(hardDeny, re)
	}
	m, err := newMetrics(srv.Registry(), st, time.Now)
	if err != nil {
		return abort(err)
	}
	engine, err := newPolicy(cfg.Approval.PolicyFile, srv.Registry(), log)
	if err != nil {
		return abort(err)
	}
	stats, err := promstats.New(srv.Registry(), grants, time.Now)
	if err != nil {
		return abort(err)
	}
	var keeper app.ImageKeeper
	if cfg.Images.Keep {
		files, err := store.OpenImageFiles(cfg.Images.KeepDir, cfg.Images.KeepMaxBytes)
		if err != nil {
			return abort(err)
		}
		keeper = files
	}
	hc := rpcserver.NewHTTPClient()
	defer hc.CloseIdleConnections()
	notifier, err := gateways(srv, hc, cfg)
	if err != nil {
		return abort(err)
	}
	svc := app.New(stats.Store(store.MarkOutages(st)), grants, approvers, app.Config{
		Policy: domain.PolicyConfig{HardDenyPaths: cfg.Approval.HardDeny.Paths, HardDenyCommands: hardDeny,
			CostLimitUSD: cfg.Approval.CostLimitUSD, TokenLimit: cfg.Approval.TokenLimit},
		Engine:              engine.holder,
		BroadOverwriteFiles: cfg.Approval.BroadOverwriteFiles, PendingTTL: cfg.Approval.PendingTTL,
		AutoApproveAllowed: cfg.Approval.AutoApprove.Enabled, DefaultGrantTTL: cfg.Approval.AutoApprove.DefaultTTL,
		MaxGrantTTL: cfg.Approval.AutoApprove.MaxTTL, ConsoleURL: cfg.Approval.ConsoleURL, DefaultScope: app.GrantInput{TaskTypes: cfg.Approval.AutoApprove.DefaultScope.Tasks,
			PathPrefixes: cfg.Approval.AutoApprove.DefaultScope.Paths, Routes: cfg.Approval.AutoApprove.DefaultScope.Routes}, Location: loc, DefaultLocale: cfg.Locale,
		ClaimLease: cfg.Approval.ClaimLease,
	}, log, app.WithMetrics(m), app.WithKeyring(st.keys), app.WithTracer(srv.Telemetry().TracerProvider),
		app.WithNotifier(notifier), app.WithLeases(st.leases), app.WithImages(st.images, keeper))
	srv.Mount(approvalv1connect.NewApprovalServiceHandler(rpc.NewHandler(svc, log), srv.HandlerOptions()...))
	httpapi.New(svc, approvers, log).Register(srv.HandlePublic)
	// After the REST API, so the full console (assets, diff view, Auto-Approve) owns /ui/.
	ui.Register(srv.HandlePublic)
	srv.PublicRouter().NotFound(httpapi.NotFound)
	srv.PublicRouter().MethodNotAllowed(httpapi.MethodNotAllowed)
	srv.AddReadiness("store", st.ping)
	audit, err := newAuditWatch(srv.Registry(), st, log)
	if err != nil {
		return abort(err)
	}

	var wg sync.WaitGroup
	sweepCtx, stopSweep := context.WithCancel(ctx)
	if every := cfg.Approval.Audit.VerifyInterval; every > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			audit.run(sweepCtx, every)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		svc.RunSweeper(sweepCtx, cfg.Approval.SweepInterval, srv.Replica())
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		engine.watch(sweepCtx)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		svc.RunNotices(sweepCtx, cfg.Approval.SweepInterval)
	}()
	err = srv.Run(ctx)
	stopSweep()
	wg.Wait()
	return err
}

// gateways is the push path to the chats (the gateways' NotificationService), for the notices
// a requester is owed when their job is decided elsewhere or expires.
func gateways(srv *rpcserver.Server, hc connect.HTTPClient, cfg Config) (notify.Gateways, error) {
	base, err := rpcserver.ClientOptions(srv.Telemetry(), 30*time.Second)
	if err != nil {
		return notify.Gateways{}, fmt.Errorf("client options: %w", err)
	}
	client := func(url, target string) gatewayv1connect.NotificationServiceClient {
		return gatewayv1connect.NewNotificationServiceClient(hc, url, append(slices.Clip(base), svcauth.Client(srv.Credentials(), target))...)
	}
	return notify.Gateways{ByChannel: map[string]gatewayv1connect.NotificationServiceClient{
		"line":  client(cfg.Services.GatewayLine.URL, svcauth.GatewayLine),
		"slack": client(cfg.Services.GatewaySlack.URL, svcauth.GatewaySlack),
		// The terminal (picoclaw chat / run) serves notifications for cli: sessions.
		"cli": client(cfg.Services.CLI.URL, svcauth.CLI),
	}}, nil
}
