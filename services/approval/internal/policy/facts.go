package policy

import (
	"slices"

	"github.com/google/cel-go/interpreter"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Facts are what rules see: computed by approval from the patch itself and the request, never
// taken from the proposal's own risk claims. The keys are the CEL variable names (docs/security.md
// lists them).
type Facts map[string]any

// opFacts are one operation's facts, the CEL variable `op` of operation rules.
type opFacts map[string]any

// buildFacts computes the facts of a request. Every value is a JSON- and CEL-friendly type.
func buildFacts(cfg domain.PolicyConfig, in domain.PolicyInput) (Facts, []opFacts) {
	p := in.Patch
	ops := make([]opFacts, len(p.Operations))
	list := make([]any, len(p.Operations))
	for i, op := range p.Operations {
		flags := make([]string, len(op.Flags))
		details := make(map[string]string, len(op.Flags))
		for j, f := range op.Flags {
			flags[j] = string(f)
			details[string(f)] = domain.HitDetail(op, f)
		}
		paths := patch.OperationPaths(op)
		if paths == nil {
			paths = []string{}
		}
		denyPath, _ := domain.DeniedPathReason(cfg, op)
		denyCommand := domain.DeniedCommandReason(cfg, op)
		f := opFacts{
			"number": int64(op.Index + 1), "index": int64(op.Index), "type": string(op.Type), "action": op.Action,
			"kind": string(op.Type) + "." + op.Action, "target": op.Target, "paths": paths, "flags": flags,
			"details": details, "hard_deny_path": denyPath, "hard_deny_command": denyCommand,
		}
		ops[i], list[i] = f, map[string]any(f)
	}
	flags := make([]string, len(p.Flags))
	for i, f := range p.Flags {
		flags[i] = string(f)
	}
	paths := slices.Clone(p.AffectedPaths)
	if paths == nil {
		paths = []string{}
	}
	kinds := make([]string, 0, len(p.Operations))
	for _, op := range p.Operations {
		if k := string(op.Type) + "." + op.Action; !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	facts := Facts{
		"ops":   list,
		"kinds": kinds,
		"paths": paths,
		"flags": flags,
		"stats": map[string]int64{"files": int64(p.Stats.Files), "additions": int64(p.Stats.Additions),
			"deletions": int64(p.Stats.Deletions), "operations": int64(len(p.Operations))},
		"route":                 in.Route,
		"task_type":             in.TaskType,
		"requester":             in.Requester,
		"cost":                  map[string]any{"usd": in.Cost.EstimatedCostUSD, "tokens": in.Cost.EstimatedTokens, "near_limit": in.Cost.NearLimit},
		"limits":                map[string]any{"cost_usd": cfg.CostLimitUSD, "tokens": cfg.TokenLimit},
		"proposal_uses_browser": in.ProposalUsesBrowser,
		"unknown_blocks":        int64(len(p.Unknown)),
	}
	return facts, ops
}

// activation resolves the patch facts and, for operation rules, `op`, without copying maps.
type activation struct {
	facts Facts
	op    opFacts
}

func (a *activation) ResolveName(name string) (any, bool) {
	if name == "op" && a.op != nil {
		return map[string]any(a.op), true
	}
	v, ok := a.facts[name]
	return v, ok
}

func (a *activation) Parent() interpreter.Activation { return nil }
