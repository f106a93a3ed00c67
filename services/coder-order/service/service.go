// Package service is the public entry point of coder-order: proposal writers order1..3 (Aka, Ao, Gin) over the provider adapters.
package service

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1/coderv1connect"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/heartbeat"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/ollama"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/providers"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/workspace"
	"github.com/picoclaw-suite/picoclaw/services/coder-order/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/coder-order/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/coder-order/internal/rpc"
)

// Name is the service name used in logs, traces, metrics and health checks.
const Name = "coder-order"

// Config is the configuration of coder-order.
type Config struct {
	config.Common `yaml:",inline"`

	Orders       Orders             `yaml:"orders"`
	Deliberation Deliberation       `yaml:"deliberation"`
	Ollama       llm.OllamaSettings `yaml:"ollama"`
	Approval     ApprovalLimits     `yaml:"approval"`
	Coders       Coders             `yaml:"coders"`

	// Wiring: listeners, log writer and telemetry handed over by tests and the embedded suite.
	rpcserver.Wiring `yaml:"-"`
	// HTTPClient, when set, is used for provider calls (tests).
	HTTPClient *http.Client `yaml:"-"`
	// LookupEnv, when set, replaces os.LookupEnv for API keys (tests, embedded suite).
	LookupEnv func(string) (string, bool) `yaml:"-"`
	// Restarter, when set, restarts Ollama for the orders on it and the other services sharing
	// it (the embedded suite's one Restarter); nil: the orders share one of their own.
	Restarter *ollama.Restarter `yaml:"-"`
}

// DefaultConfig returns the defaults of the spec.
func DefaultConfig() Config {
	return Config{
		Common:       config.DefaultCommon(),
		Orders:       DefaultOrders(),
		Deliberation: Deliberation{MaxParallelOrders: 3, TimeoutSec: 120},
		Ollama:       llm.DefaultOllamaSettings(),
		Approval:     ApprovalLimits{CostLimitUSD: 1.0, TokenLimit: 100000},
		Coders:       Coders{ContextTokens: 8000, WorkspaceTimeout: 5 * time.Second, Tools: llm.DefaultToolsConfig()},
	}
}

// Validate checks the configuration and names the offending key.
func (c *Config) Validate() error {
	var errs config.Errors
	errs.Add(c.Common.Validate())
	errs.Add(c.validateOrders())
	if c.Coders.ContextTokens < 0 {
		errs.Addf("coders.context_tokens", "must be 0 (no repository context) or positive, got %d", c.Coders.ContextTokens)
	}
	if c.Coders.WorkspaceTimeout <= 0 {
		errs.Addf("coders.workspace_timeout", "must be positive, got %s", c.Coders.WorkspaceTimeout)
	}
	errs.Add(config.Prefix("coders.tools", c.Coders.Tools.Validate()))
	return errs.Err()
}

// Run serves coder-order until ctx is cancelled.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	srv, err := rpcserver.Start(ctx, rpcserver.Setup{Name: Name, Common: cfg.Common, Wiring: cfg.Wiring})
	if err != nil {
		return err
	}
	log := srv.Logger()
	metrics := llm.NewMetrics(srv.Registry())
	var view *workspace.Client
	if (cfg.Coders.ContextTokens > 0 || cfg.Coders.Tools.MaxCalls > 0) && cfg.Services.Executor.URL != "" {
		opts, err := srv.PeerOptions(cfg.Coders.WorkspaceTimeout, svcauth.Executor)
		if err != nil {
			return fmt.Errorf("executor client: %w", err)
		}
		view = workspace.New(executorv1connect.NewWorkspaceServiceClient(rpcserver.NewHTTPClient(), cfg.Services.Executor.URL, opts...))
	}
	proposer := newProposer(cfg, log, srv.Telemetry().TracerProvider, metrics.Observe, srv.Agent, view)
	checkLocalOrders(ctx, cfg, log)
	srv.Mount(coderv1connect.NewCoderServiceHandler(rpc.NewHandler(proposer, cfg.Locale, log), srv.HandlerOptions()...))
	return srv.Run(ctx)
}

// newProposer builds the use cases from cfg: one client per enabled order. An order whose
// client cannot be built (its API key is not set) stays listed as unavailable, so the rest of
// the suite keeps working and the user is told why.
func newProposer(cfg Config, log *slog.Logger, tracer trace.TracerProvider, observer llm.Observer, agent func(id, alias string) *heartbeat.Agent, view *workspace.Client) *app.Proposer {
	var orders []app.Order
	restarter := cfg.restarter(log)
	resolved := cfg.Orders.resolved()
	for _, id := range domain.Orders {
		o := resolved[id]
		lc := cfg.orderConfig(o)
		ao := app.Order{ID: id, Alias: o.Alias, Enabled: o.Enabled, MaxTokens: lc.MaxTokens}
		if agent != nil {
			// Each order beats as its own agent (order1/Aka, order2/Ao, order3/Gin) with its own
			// status and last provider error, whether or not it is usable right now.
			agent(id, o.Alias)
		}
		ao.Price, ao.HasPrice = lc.Price()
		if o.Enabled {
			opts := []llm.Option{llm.WithLogger(log), llm.WithTracerProvider(tracer)}
			if observer != nil {
				opts = append(opts, llm.WithObserver(observer))
			}
			if cfg.HTTPClient != nil {
				opts = append(opts, llm.WithHTTPClient(cfg.HTTPClient))
			}
			if cfg.LookupEnv != nil {
				opts = append(opts, llm.WithLookupEnv(cfg.LookupEnv))
			}
			client, err := providers.New(lc, opts...)
			if err != nil {
				ao.Unavailable = err
				log.Warn("coder.order_unavailable", slog.String("order", id), slog.String("provider", lc.Provider), slog.String("error", err.Error()))
			}
			if client != nil {
				// An order on Ollama whose call finds the model missing or the server
				// unreachable restarts Ollama once (restart_command) and tries again.
				client = ollama.Guarded(client, restarter, log)
			}
			ao.Client = client
			if client != nil && agent != nil {
				ao.Client = llm.Tracked(client, agent(id, o.Alias))
			}
		}
		orders = append(orders, ao)
	}
	def, _ := domain.NormalizeOrder(cfg.Orders.Default, domain.Order2)
	var ws app.Workspace
	var tools func() app.ToolSession
	if view != nil {
		if cfg.Coders.ContextTokens > 0 {
			ws = view
		}
		if cfg.Coders.Tools.MaxCalls > 0 {
			tools = func() app.ToolSession { return view.Tools(workspace.Options{}) }
		}
	}
	return app.NewProposer(app.Config{
		Orders:              orders,
		DefaultOrder:        def,
		Limits:              app.Limits{CostUSD: cfg.Approval.CostLimitUSD, Tokens: cfg.Approval.TokenLimit},
		MaxParallel:         cfg.Deliberation.MaxParallelOrders,
		DeliberationTimeout: time.Duration(cfg.Deliberation.TimeoutSec) * time.Second,
		Workspace:           ws,
		ContextTokens:       int64(cfg.Coders.ContextTokens),
		Tools:               tools,
		ToolLimits:          cfg.Coders.Tools.Limits(),
		Logger:              log,
	})
}

// restarter is the Restarter the orders on Ollama share: the embedded suite's, or one of the
// ollama section's restart_command (nil when it is empty). An order on another server or with
// a restart command of its own gets its own (ollama.Guarded).
func (c *Config) restarter(log *slog.Logger) *ollama.Restarter {
	if c.Restarter != nil {
		return c.Restarter
	}
	o := llm.Config{Provider: llm.ProviderOllama}.WithOllama(c.Ollama).WithDefaults()
	return ollama.NewRestarter(ollama.RestarterConfig{Command: o.RestartCommand, BaseURL: o.BaseURL, Logger: log})
}

// checkLocalOrders checks the model of every enabled order on Ollama at start: a missing one
// (or one whose context exceeds ollama.max_context) is logged with the command that fixes it;
// coder-order starts anyway and the order says what to run when it is asked.
func checkLocalOrders(ctx context.Context, cfg Config, log *slog.Logger) {
	resolved := cfg.Orders.resolved()
	for _, id := range domain.Orders {
		if o := resolved[id]; o.Enabled {
			ollama.CheckAtStart(ctx, cfg.orderConfig(o), id, log)
		}
	}
}
