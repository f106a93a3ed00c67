// Package service is the public entry point of router-shiro: route decision, loop control, worker model calls, delegation and deliberation.
package service

import (
	"context"
	"fmt"
	"time"

	builtin "github.com/picoclaw-suite/picoclaw/config"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1/coderv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/ollama"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/providers"
	"github.com/picoclaw-suite/picoclaw/pkg/outbound"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/workspace"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/coder"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/rpc"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/rules"
)

// Name is the service name used in logs, traces, metrics and health checks.
const Name = "router-shiro"

const (
	// workspaceCallTimeout bounds each call to the executor's read-only view.
	workspaceCallTimeout = 5 * time.Second
	// workerToolResultBytes caps each tool result the worker reads: a local model's context
	// is small (num_ctx 8192 by default).
	workerToolResultBytes = 8 << 10
)

// Config is the configuration of router-shiro.
type Config struct {
	config.Common `yaml:",inline"`

	Routing      Routing            `yaml:"routing"`
	Loop         Loop               `yaml:"loop"`
	Channels     Channels           `yaml:"channels"`
	Agents       Agents             `yaml:"agents"`
	Ollama       llm.OllamaSettings `yaml:"ollama"`
	Deliberation Deliberation       `yaml:"deliberation"`

	// Wiring: listeners, log writer and telemetry handed over by tests and the embedded suite.
	rpcserver.Wiring `yaml:"-"`
	// Worker, when set, replaces the model built from agents.worker (embedded suite). It must
	// be local all the same.
	Worker llm.Client `yaml:"-"`
	// Restarter, when set, restarts Ollama for this service and the others sharing it (the
	// embedded suite); otherwise one is made from ollama.restart_command.
	Restarter *ollama.Restarter `yaml:"-"`
}

// DefaultConfig returns the defaults of the spec.
func DefaultConfig() Config {
	return Config{
		Common:       config.DefaultCommon(),
		Routing:      defaultRouting(),
		Loop:         defaultLoop(),
		Agents:       defaultAgents(),
		Ollama:       llm.DefaultOllamaSettings(),
		Deliberation: Deliberation{Enabled: true, TimeoutSec: 120},
	}
}

// Validate checks the configuration and names the offending key.
func (c *Config) Validate() error {
	var errs config.Errors
	errs.Add(c.Common.Validate())
	c.Routing.validate(&errs)
	c.Loop.validate(&errs)
	c.Channels.validate(&errs)
	c.Agents.Worker.validate(&errs)
	if c.Deliberation.TimeoutSec < 0 {
		errs.Addf("deliberation.timeout_sec", "must not be negative, got %d", c.Deliberation.TimeoutSec)
	}
	return errs.Err()
}

// LoadRules reads and validates the rule dictionary; errors name the file and the rule.
func LoadRules(path string) (*rules.Dictionary, error) {
	// A default path that is not on disk reads the built-in copy.
	data, _, err := builtin.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("routing.rules_file: %w", err)
	}
	d, err := rules.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("routing.rules_file %s: %w", path, err)
	}
	return d, nil
}

// Run serves router-shiro until ctx is cancelled.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	dict, err := LoadRules(cfg.Routing.RulesFile)
	if err != nil {
		return err
	}
	srv, err := rpcserver.Start(ctx, rpcserver.Setup{Name: Name, Common: cfg.Common, Wiring: cfg.Wiring})
	if err != nil {
		return err
	}
	fail := func(err error) error { return srv.Abort(ctx, err) }
	log := srv.Logger()
	met, err := newMetrics(srv.Registry())
	if err != nil {
		return fail(err)
	}
	worker := cfg.Worker
	if worker == nil {
		worker, err = providers.New(cfg.Agents.Worker.Config.WithOllama(cfg.Ollama), llm.WithLogger(log), llm.WithObserver(met.llm.Observe),
			llm.WithTracerProvider(srv.Telemetry().TracerProvider))
		if err != nil {
			return fail(fmt.Errorf("agents.worker: %w", err))
		}
	}
	local, _ := worker.(*ollama.Client)
	if local != nil {
		// A missing model is logged with the command that installs it; Shiro starts anyway and
		// every route that needs the model says what to run.
		ollama.CheckAtStart(ctx, cfg.Agents.Worker.Config.WithOllama(cfg.Ollama), "worker", log)
	}
	// A call that finds the model missing or Ollama unreachable restarts Ollama once
	// (restart_command) and tries again.
	worker = ollama.Guarded(worker, cfg.Restarter, log)
	// Shiro beats as the worker agent, busy while the worker model runs.
	worker = llm.Tracked(worker, srv.Agent("worker", "Shiro"))
	opts, err := srv.PeerOptions(2*time.Minute, svcauth.CoderOrder)
	if err != nil {
		return fail(err)
	}
	coderClient := coder.New(coderv1connect.NewCoderServiceClient(rpcserver.NewHTTPClient(), cfg.Services.CoderOrder.URL, opts...))
	routerOpts := []app.Option{app.WithMetrics(met)}
	if cfg.Loop.Tools.MaxCalls > 0 && cfg.Services.Executor.URL != "" {
		viewOpts, err := srv.PeerOptions(workspaceCallTimeout, svcauth.Executor)
		if err != nil {
			return fail(err)
		}
		view := workspace.New(executorv1connect.NewWorkspaceServiceClient(rpcserver.NewHTTPClient(), cfg.Services.Executor.URL, viewOpts...))
		routerOpts = append(routerOpts, app.WithTools(func() app.Toolset {
			return view.Tools(workspace.Options{MaxResultBytes: workerToolResultBytes})
		}, cfg.Loop.Tools.Limits()))
	}
	defaultOrder, _ := domain.NormalizeOrder(cfg.Routing.DefaultCodeOrder)
	router, err := app.New(app.Config{
		Thresholds: domain.Thresholds{
			MinConfidence:        cfg.Routing.Classifier.MinConfidence,
			MinConfidenceForCode: cfg.Routing.Classifier.MinConfidenceForCode,
		},
		ClassifierEnabled: cfg.Routing.Classifier.Enabled,
		SignalsEnabled:    cfg.Routing.Signals.Enabled,
		ClassifierTimeout: seconds(cfg.Routing.Classifier.TimeoutSec),
		Loop: domain.LoopLimits{
			MaxLoops:      cfg.Loop.MaxLoops,
			MaxMillis:     time.Duration(cfg.Loop.MaxMillis) * time.Millisecond,
			MinConfidence: cfg.Loop.MinConfidence,
		},
		DefaultCodeOrder:         defaultOrder,
		ForcedRoutes:             cfg.Channels.forcedRoutes(),
		DeliberationTimeout:      seconds(cfg.Deliberation.TimeoutSec),
		AutoDeliberateOnHighRisk: cfg.Deliberation.AutoOnHighRisk && cfg.Deliberation.Enabled,
		DeliberationEnabled:      cfg.Deliberation.Enabled,
		Locale:                   cfg.Locale,
		HistoryTurns:             cfg.Loop.HistoryTurns,
	}, dict, worker, coderClient, log, routerOpts...)
	if err != nil {
		return fail(fmt.Errorf("agents.worker: %w", err))
	}
	if local != nil {
		// Ready while Ollama answers: a missing model does not make Shiro unready (it would
		// then never get to tell users what to run).
		api := ollama.NewAPI(cfg.Agents.Worker.Config.WithOllama(cfg.Ollama).WithDefaults().BaseURL,
			outbound.Client(0, outbound.Traced(srv.Telemetry().TracerProvider)))
		srv.AddReadiness("worker-model", func(ctx context.Context) error {
			_, err := api.List(ctx)
			return err
		})
	}
	log.InfoContext(ctx, "router.rules_loaded", "rules", dict.Len(), "file", cfg.Routing.RulesFile,
		"worker_provider", worker.Provider(), "worker_model", worker.Model())
	srv.Mount(routerv1connect.NewRouterServiceHandler(&rpc.Handler{Router: router, Log: log}, srv.HandlerOptions()...))
	return srv.Run(ctx)
}
