package service

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
