// Package app holds router-shiro's use cases: deciding a route and processing a task (worker
// loop, delegation to coder-order, deliberation).
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/rules"
)

// Config is the part of the service configuration the use cases need.
type Config struct {
	Thresholds        domain.Thresholds
	ClassifierEnabled bool
	// SignalsEnabled lets cheap signals decide plain conversation without the classifier.
	SignalsEnabled bool
	// ClassifierTimeout bounds the one classifier call, its wait for a turn at the model and its
	// attempts together (0 = the model client's own timeout per attempt).
	ClassifierTimeout time.Duration
	Loop              domain.LoopLimits
	// DefaultCodeOrder is what a plain CODE route asks ("" lets coder-order use orders.default).
	DefaultCodeOrder string
	// ForcedRoutes maps a channel name (line, slack, cli) to its forced route.
	ForcedRoutes map[string]domain.Route
	// DeliberationEnabled allows /deliberate (deliberation.enabled).
	DeliberationEnabled bool
	// DeliberationTimeout bounds ProposeMany (deliberation.timeout_sec).
	DeliberationTimeout time.Duration
	// AutoDeliberateOnHighRisk asks the other orders too when a CODE proposal is high risk
	// (deliberation.auto_on_high_risk).
	AutoDeliberateOnHighRisk bool
	// Locale is the default language of user-facing text (ja or en).
	Locale string
	// HistoryTurns caps how many earlier turns go to the worker model.
	HistoryTurns int
}

// Coder is coder-order as the use cases see it.
type Coder interface {
	Propose(ctx context.Context, in ProposeInput) (domain.Proposal, error)
	ProposeMany(ctx context.Context, in ProposeManyInput) ([]domain.ProposalResult, error)
}

// ProposeInput asks one order for a proposal.
type ProposeInput struct {
	JobID     string
	Order     string
	Task      string
	Route     domain.Route
	Context   []string
	LocalOnly bool
	Locale    string
	// ConfirmedCostUSD and ConfirmedTokens continue an approved cost confirmation.
	ConfirmedCostUSD float64
	ConfirmedTokens  int64
}

// ProposeManyInput asks several orders (empty = every enabled order).
type ProposeManyInput struct {
	JobID     string
	Orders    []string
	Task      string
	Context   []string
	LocalOnly bool
	Locale    string
}

// CoderError is a failed coder call with a stable code (e.g. timeout, unauthenticated,
// cost_over_limit, unavailable), as the user should hear about it.
type CoderError struct {
	Code    string
	Message string
	// Estimate is what the call would cost, with Code cost_over_limit.
	Estimate *domain.CostHint
}

func (e *CoderError) Error() string { return "coder-order " + e.Code + ": " + e.Message }

// Router runs the use cases.
type Router struct {
	cfg     Config
	rules   *rules.Dictionary
	worker  llm.Client
	coder   Coder
	log     *slog.Logger
	now     func() time.Time
	metrics Metrics
	// openTools and toolLimits are the worker's read-only workspace tools (WithTools).
	openTools  func() Toolset
	toolLimits llm.ToolLimits
}

// Option configures a Router.
type Option func(*Router)

// Metrics counts what the use cases decide; the service backs it with Prometheus.
type Metrics interface {
	Decision(source, route string)
	ClassifierError(reason string)
	LoopStop(reason string)
	Reroute(from, to string)
}

type noMetrics struct{}

func (noMetrics) Decision(string, string) {}
func (noMetrics) ClassifierError(string)  {}
func (noMetrics) LoopStop(string)         {}
func (noMetrics) Reroute(string, string)  {}

// WithMetrics records decisions, classifier errors, loop stops and reroutes.
func WithMetrics(m Metrics) Option { return func(r *Router) { r.metrics = m } }

// WithClock replaces time.Now, so loop tests can spend max_millis without waiting.
func WithClock(now func() time.Time) Option { return func(r *Router) { r.now = now } }

// ErrCloudWorker: the worker model must be local (SPEC §4: only CODE routes may use the cloud).
var ErrCloudWorker = errors.New("the worker model must be local (ollama or offline): cloud models serve CODE routes only")

// New checks its dependencies and returns a Router.
func New(cfg Config, dict *rules.Dictionary, worker llm.Client, coder Coder, log *slog.Logger, opts ...Option) (*Router, error) {
	if dict == nil || worker == nil || coder == nil || log == nil {
		return nil, errors.New("router: rules, worker, coder and logger are required")
	}
	if worker.Cloud() {
		return nil, fmt.Errorf("%w (got provider %s)", ErrCloudWorker, worker.Provider())
	}
	if cfg.Locale == "" {
		cfg.Locale = "ja"
	}
	r := &Router{cfg: cfg, rules: dict, worker: worker, coder: coder, log: log, now: time.Now, metrics: noMetrics{}}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// Turn is one earlier message of the conversation.
type Turn struct {
	// Role is user or assistant.
	Role string
	Text string
}

// Input is one user message to route.
type Input struct {
	JobID     string
	SessionID string
	Channel   string
	Text      string
	LocalOnly bool
	PrevRoute domain.Route
	History   []Turn
	Locale    string
	// ConfirmedCostUSD and ConfirmedTokens: a person approved continuing a coder call at about
	// this cost (cost_over_limit); passed on to coder-order.
	ConfirmedCostUSD float64
	ConfirmedTokens  int64
}

func (r *Router) locale(in Input) string {
	if in.Locale == "ja" || in.Locale == "en" {
		return in.Locale
	}
	return r.cfg.Locale
}

func jobAttr(in Input) slog.Attr { return slog.String("job_id", in.JobID) }

// label is a log value from a closed set (routes, sources, rule names): written as a string,
// not searched for secrets (telemetry.Label).
type label = telemetry.Label
