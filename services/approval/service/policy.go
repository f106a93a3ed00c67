package service

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/httpapi"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/policy"
)

// policyPollInterval is how often the policy file is checked for changes.
const policyPollInterval = 2 * time.Second

// policyEngine is the policy in force and what keeps it current.
type policyEngine struct {
	holder *policy.Holder
}

// newPolicy loads approval.policy_file (or the shipped default): an invalid policy refuses the
// start with the rule's name and the CEL error. Reload failures are counted.
func newPolicy(path string, reg prometheus.Registerer, log *slog.Logger) (*policyEngine, error) {
	failures := prometheus.NewCounter(prometheus.CounterOpts{Name: "picoclaw_approval_policy_reload_failures_total",
		Help: "Policy file reloads refused (the previous policy stays in force)."})
	if err := reg.Register(failures); err != nil {
		return nil, err
	}
	h, err := policy.NewHolder(path, log, failures.Inc)
	if err != nil {
		return nil, fmt.Errorf("approval.policy_file: %w", err)
	}
	log.Info("approval.policy_loaded", slog.String("policy_file", path), slog.String("policy_hash", h.Current().Hash()))
	return &policyEngine{holder: h}, nil
}

// watch reloads the policy file when it changes and on SIGHUP, until ctx ends.
func (p *policyEngine) watch(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	p.holder.Watch(ctx, policyPollInterval, hup)
}

// PolicySimulationRequest is a patch and its context for SimulatePolicy (the body of
// POST /v1/policy/simulate).
type PolicySimulationRequest = httpapi.SimulateRequest

// PolicySimulation is the decision, the deciding rule and the facts (the answer of
// POST /v1/policy/simulate).
type PolicySimulation = httpapi.SimulateResponse

// DefaultPolicy returns the shipped default policy file.
func DefaultPolicy() []byte { return policy.DefaultSource() }

// SimulatePolicy answers offline what the policy of cfg (approval.policy_file, or the default)
// decides for a patch: no store, no job, and no Auto-Approve grant (so "ask" where a grant
// could have approved).
func SimulatePolicy(cfg Config, req PolicySimulationRequest) (PolicySimulation, error) {
	pol, err := policy.Load(cfg.Approval.PolicyFile)
	if err != nil {
		return PolicySimulation{}, fmt.Errorf("approval.policy_file: %w", err)
	}
	pc := domain.PolicyConfig{HardDenyPaths: cfg.Approval.HardDeny.Paths, CostLimitUSD: cfg.Approval.CostLimitUSD, TokenLimit: cfg.Approval.TokenLimit}
	for i, expr := range cfg.Approval.HardDeny.Commands {
		re, err := regexp.Compile(expr)
		if err != nil {
			return PolicySimulation{}, fmt.Errorf("approval.hard_deny.commands[%d]: %w", i, err)
		}
		pc.HardDenyCommands = append(pc.HardDenyCommands, re)
	}
	in := req.Input()
	p, err := patch.Parse(in.Patch, patch.Options{BroadOverwriteFiles: cfg.Approval.BroadOverwriteFiles})
	if err != nil {
		return PolicySimulation{}, domain.PatchUnreadable(err)
	}
	if len(p.Operations) == 0 {
		return PolicySimulation{}, domain.NoOperations()
	}
	d, facts := pol.Explain(pc, domain.PolicyInput{Patch: p, TaskType: in.TaskType, Route: in.Route, Cost: in.Cost,
		ProposalUsesBrowser: in.UsesBrowser, Requester: in.RequestedBy.ID}, nil, time.Now())
	return httpapi.ViewSimulation(app.Simulation{Decision: d, Facts: facts}, req.Locale), nil
}
