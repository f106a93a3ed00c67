package app

import (
	"context"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Simulation is what the policy would decide for a proposal now, with the facts it looked at.
type Simulation struct {
	Decision domain.Decision
	Facts    map[string]any
	// Grant is the Auto-Approve grant in force during the simulation (nil when off).
	Grant *domain.Grant
}

// SimulatePolicy evaluates a proposal like RequestApproval would, against the current policy
// and Auto-Approve grant, without recording anything.
func (s *Service) SimulatePolicy(ctx context.Context, in RequestInput) (Simulation, error) {
	p, err := patch.Parse(in.Patch, s.parseOpts())
	if err != nil {
		return Simulation{}, domain.PatchUnreadable(err)
	}
	if len(p.Operations) == 0 {
		return Simulation{}, domain.NoOperations()
	}
	now := s.clock()
	grant := s.activeGrant(ctx, now)
	pin := domain.PolicyInput{Patch: p, TaskType: in.TaskType, Route: in.Route, Cost: in.Cost, ProposalUsesBrowser: in.UsesBrowser,
		Requester: in.RequestedBy.ID}
	if s.cfg.Engine == nil {
		return Simulation{Decision: domain.Evaluate(s.cfg.Policy, pin, grant, now), Grant: grant}, nil
	}
	d, facts := s.cfg.Engine.Explain(s.cfg.Policy, pin, grant, now)
	return Simulation{Decision: d, Facts: facts, Grant: grant}, nil
}
