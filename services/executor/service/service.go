// Package service is the public entry point of executor: applies approved patches inside the confined workspace.
package service

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"time"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/outbound"
	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/pkg/redact"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/approvalclient"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/browser"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/journal"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/proc"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/rpc"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/sandbox"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/workspace"
)

// Name is the service name used in logs, traces, metrics and health checks.
const Name = "executor"

// Config is the configuration of executor.
type Config struct {
	config.Common `yaml:",inline"`

	Executor Executor `yaml:"executor"`
	// Approval is the part of the approval section the executor must agree on to recompute
	// the same parse of a patch.
	Approval ApprovalShared `yaml:"approval"`

	// Wiring: listeners, log writer and telemetry handed over by tests and the embedded suite.
	rpcserver.Wiring `yaml:"-"`
}

// ApprovalShared are approval keys the executor reads.
type ApprovalShared struct {
	BroadOverwriteFiles int `yaml:"broad_overwrite_files"`
}

// Executor is the executor section (SPEC §8).
type Executor struct {
	// Workspace is the only directory jobs may change; created when missing.
	Workspace        string        `yaml:"workspace"`
	CommandTimeout   time.Duration `yaml:"command_timeout"`
	GitTimeout       time.Duration `yaml:"git_timeout"`
	OutputLimitBytes int           `yaml:"output_limit_bytes"`
	StopOnError      bool          `yaml:"stop_on_error"`
	DryRun           bool          `yaml:"dry_run"`
	AutoCommit       bool          `yaml:"auto_commit"`
	// CommitMessagePrefix starts every auto-commit subject.
	CommitMessagePrefix string `yaml:"commit_message_prefix"`
	RollbackOnFailure   bool   `yaml:"rollback_on_failure"`
	// EnvAllowlist names the only environment variables shell commands and git see.
	EnvAllowlist []string `yaml:"env_allowlist"`
	// ExecutorID names this executor as the holder of its claims in approval's audit log; it
	// must differ between replicas (default: "executor@" and the replica id).
	ExecutorID     string `yaml:"executor_id"`
	GitAuthorName  string `yaml:"git_author_name"`
	GitAuthorEmail string `yaml:"git_author_email"`
	// ApprovalTimeout bounds each call to the approval service.
	ApprovalTimeout time.Duration `yaml:"approval_timeout"`
	MCP             MCP           `yaml:"mcp"`
	Browser         Browser       `yaml:"browser"`
	// Sandbox confines every shell command and git invocation (SPEC §8).
	Sandbox Sandbox `yaml:"sandbox"`

	// StateDir holds the workspace lock and the job journal that executors sharing the
	// workspace share too (docs/scaling.md). It lies outside the workspace, where no command
	// of a job reaches it.
	StateDir string `yaml:"state_dir"`
	// TakeoverInterval is how often the executor looks for jobs whose executor stopped
	// renewing its claim, to finish them.
	TakeoverInterval time.Duration `yaml:"takeover_interval"`
}

// Sandbox is the executor.sandbox section: mode namespaces (default) or none, network none
// (default) or allow, the TCP ports allowed with network allow, and resource limits.
type Sandbox = sandbox.Config

// SandboxLimits are the resource limits of executor.sandbox.limits.
type SandboxLimits = sandbox.Limits

// MaybeRunSandboxInit makes this process the sandbox init when the executor started it as
// one (it then never returns). Every binary that runs the executor calls it first in main,
// before anything else; tests that run the executor in-process call it from TestMain.
func MaybeRunSandboxInit() { sandbox.MaybeRunInit() }

// MCP is the browser bridge.
type MCP struct {
	// ChromeBridgeURL is the MCP Chrome bridge's streamable HTTP endpoint; empty = no browser.
	ChromeBridgeURL string        `yaml:"chrome_bridge_url"`
	Timeout         time.Duration `yaml:"timeout"`
}

// Browser is the executor.browser section.
type Browser struct {
	// Tools overrides the bridge tool a browser action calls, by key (navigate, click, fill,
	// get_content, screenshot, keyboard), for bridges that name their tools differently. At
	// start the executor asks the bridge, when it answers, for its tools: an override it does
	// not serve stops the start with this key named (checkBrowserTools).
	Tools map[string]string `yaml:"tools"`
	// ArtifactsDir keeps screenshots, one directory per job; it lies outside the workspace so
	// no job can change what it recorded.
	ArtifactsDir string `yaml:"artifacts_dir"`
}

// maxOutputLimit keeps a misconfigured cap from holding huge outputs in memory per command.
const maxOutputLimit = 16 << 20

// DefaultConfig returns the defaults of the spec.
func DefaultConfig() Config {
	return Config{
		Common:   config.DefaultCommon(),
		Approval: ApprovalShared{BroadOverwriteFiles: 10},
		Executor: Executor{
			Workspace:           "./workspace",
			CommandTimeout:      300 * time.Second,
			GitTimeout:          30 * time.Second,
			OutputLimitBytes:    64 << 10,
			CommitMessagePrefix: "[Worker Auto-Commit]",
			RollbackOnFailure:   true,
			EnvAllowlist:        []string{"PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"},
			StateDir:            "./executor-state",
			TakeoverInterval:    15 * time.Second,
			GitAuthorName:       "PicoClaw Executor",
			GitAuthorEmail:      "executor@picoclaw.invalid",
			ApprovalTimeout:     10 * time.Second,
			MCP:                 MCP{Timeout: 30 * time.Second},
			Browser:             Browser{Tools: map[string]string{}, ArtifactsDir: "./artifacts"},
			Sandbox:             sandbox.DefaultConfig(),
		},
	}
}

// Validate checks the configuration and names the offending key.
func (c *Config) Validate() error {
	var errs config.Errors
	errs.Add(c.Common.Validate())
	e := c.Executor
	if e.Workspace == "" {
		errs.Addf("executor.workspace", "must be set")
	}
	for key, d := range map[string]time.Duration{
		"executor.command_timeout": e.CommandTimeout, "executor.git_timeout": e.GitTimeout,
		"executor.approval_timeout": e.ApprovalTimeout, "executor.mcp.timeout": e.MCP.Timeout,
	} {
		if d <= 0 {
			errs.Addf(key, "must be positive, got %s", d)
		}
	}
	if e.OutputLimitBytes <= 0 || e.OutputLimitBytes > maxOutputLimit {
		errs.Addf("executor.output_limit_bytes", "must be between 1 and %d, got %d", maxOutputLimit, e.OutputLimitBytes)
	}
	for _, name := range e.EnvAllowlist {
		if redact.IsSecretKey(name) || strings.HasSuffix(strings.ToUpper(name), "_KEY") {
			errs.Addf("executor.env_allowlist", "%s looks like a secret; commands never see API keys or tokens", name)
		}
	}
	if e.StateDir == "" {
		errs.Addf("executor.state_dir", "must be set")
	} else if inside(e.StateDir, e.Workspace) {
		errs.Addf("executor.state_dir", "must lie outside the workspace (%s): commands of a job could change it", e.Workspace)
	}
	if e.TakeoverInterval <= 0 {
		errs.Addf("executor.takeover_interval", "must be positive, got %s", e.TakeoverInterval)
	}
	if e.GitAuthorName == "" || e.GitAuthorEmail == "" {
		errs.Addf("executor.git_author_name", "git_author_name and git_author_email must be set")
	}
	if _, err := browser.ResolveTools(e.Browser.Tools); err != nil {
		errs.Addf("executor.browser.tools", "%v", err)
	}
	if e.Browser.ArtifactsDir == "" {
		errs.Addf("executor.browser.artifacts_dir", "must be set")
	}
	for _, p := range e.Sandbox.Check() {
		errs.Addf("executor.sandbox."+p.Key, "%s", p.Msg)
	}
	if c.Approval.BroadOverwriteFiles <= 0 {
		errs.Addf("approval.broad_overwrite_files", "must be positive, got %d", c.Approval.BroadOverwriteFiles)
	}
	return errs.Err()
}

// inside reports whether dir is dir root or below it.
func inside(dir, root string) bool {
	d, err1 := filepath.Abs(dir)
	r, err2 := filepath.Abs(root)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(r, d)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Run serves executor until ctx is cancelled.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.Executor.Workspace, 0o755); err != nil {
		return fmt.Errorf("executor.workspace: %w", err)
	}
	ws, err := workspace.Open(cfg.Executor.Workspace)
	if err != nil {
		return fmt.Errorf("executor.workspace: %w", err)
	}
	defer ws.Close()
	srv, err := rpcserver.Start(ctx, rpcserver.Setup{Name: Name, Common: cfg.Common, Wiring: cfg.Wiring})
	if err != nil {
		return err
	}
	sandboxState := checkSandbox(ctx, cfg.Executor.Sandbox, ws.Dir(), srv.Logger())
	jr, err := journal.Open(cfg.Executor.StateDir)
	if err != nil {
		return srv.Abort(ctx, fmt.Errorf("executor.state_dir: %w", err))
	}
	svc, view, err := newApp(cfg, srv, ws, jr)
	if err != nil {
		return err
	}
	if err := checkBrowserTools(ctx, cfg.Executor, srv.Logger()); err != nil {
		return srv.Abort(ctx, err)
	}
	reportSandbox(srv, sandboxState)
	srv.AddReadiness("workspace", func(context.Context) error {
		_, err := os.Stat(ws.Dir())
		return err
	})
	h := rpc.NewHandler(svc, view, srv.Logger())
	srv.Mount(executorv1connect.NewExecutorServiceHandler(h, srv.HandlerOptions()...))
	srv.Mount(executorv1connect.NewWorkspaceServiceHandler(h, srv.HandlerOptions()...))
	srv.Logger().InfoContext(ctx, "executor.identity", slog.String("executor_id", executorID(cfg, srv)), slog.String("state_dir", jr.Dir()))
	bg, stopBG := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { svc.RunTakeover(bg, cfg.Executor.TakeoverInterval) })
	err = srv.Run(ctx)
	stopBG()
	wg.Wait()
	return err
}

// executorID is the configured executor_id, or "executor@" and the replica id.
func executorID(cfg Config, srv *rpcserver.Server) string {
	if cfg.Executor.ExecutorID != "" {
		return cfg.Executor.ExecutorID
	}
	return Name + "@" + srv.Replica()
}

// newApp wires the use cases to the workspace, the approval client and the browser bridge.
func newApp(cfg Config, srv *rpcserver.Server, ws *workspace.Workspace, jr *journal.Journal) (*app.Service, *app.View, error) {
	opts, err := srv.PeerOptions(cfg.Executor.ApprovalTimeout, svcauth.Approval)
	if err != nil {
		return nil, nil, fmt.Errorf("approval client: %w", err)
	}
	approval := approvalclient.New(approvalv1connect.NewApprovalServiceClient(
		rpcserver.NewHTTPClient(), cfg.Services.Approval.URL, opts...))
	e := cfg.Executor
	tools, err := browser.ResolveTools(e.Browser.Tools)
	if err != nil {
		return nil, nil, fmt.Errorf("executor.browser.tools: %w", err)
	}
	runner := app.NewRunner(app.RunnerConfig{
		Workspace:      ws,
		Env:            proc.Env(e.EnvAllowlist, os.LookupEnv),
		Sandbox:        e.Sandbox,
		CommandTimeout: e.CommandTimeout,
		GitTimeout:     e.GitTimeout,
		OutputLimit:    e.OutputLimitBytes,
		GitAuthorName:  e.GitAuthorName,
		GitAuthorEmail: e.GitAuthorEmail,
		BridgeURL:      e.MCP.ChromeBridgeURL,
		BridgeTimeout:  e.MCP.Timeout,
		BridgeHTTP:     outbound.Client(0, outbound.Traced(srv.Telemetry().TracerProvider)),
		BrowserTools:   tools,
		ArtifactsDir:   e.Browser.ArtifactsDir,
		Version:        Name,
		Logger:         srv.Logger(),
	})
	popts := patch.Options{BroadOverwriteFiles: cfg.Approval.BroadOverwriteFiles}
	return app.NewService(app.Config{
		Approval:   approval,
		Parse:      func(text string) (*patch.Patch, error) { return patch.Parse(text, popts) },
		Runner:     runner,
		Modes:      app.Modes{StopOnError: e.StopOnError, DryRun: e.DryRun, AutoCommit: e.AutoCommit, CommitPrefix: e.CommitMessagePrefix, RollbackOnFailure: e.RollbackOnFailure},
		ExecutorID: executorID(cfg, srv),
		Journal:    jr,
		Locale:     cfg.Locale,
		Logger:     srv.Logger(),
	}), app.NewView(runner, srv.Logger()), nil
}
