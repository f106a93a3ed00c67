package policy

import (
	"slices"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
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

// activation resolves the patch facts and, for operation rules, `op`. A fact is converted to
// a CEL value when a rule first reads it, once per request.
type activation struct {
	facts Facts
	vars  map[string]ref.Val
	op    ref.Val
}

func newActivation(facts Facts) *activation {
	return &activation{facts: facts, vars: make(map[string]ref.Val, 4)}
}

func (a *activation) ResolveName(name string) (any, bool) {
	if name == "op" && a.op != nil {
		return a.op, true
	}
	if v, ok := a.vars[name]; ok {
		return v, true
	}
	f, ok := a.facts[name]
	if !ok {
		return nil, false
	}
	v := celValue(f)
	a.vars[name] = v
	return v, true
}

func (a *activation) Parent() interpreter.Activation { return nil }

// celValue converts the fact types buildFacts produces into CEL values, deeply.
func celValue(v any) ref.Val {
	switch x := v.(type) {
	case string:
		return types.String(x)
	case bool:
		return types.Bool(x)
	case int64:
		return types.Int(x)
	case float64:
		return types.Double(x)
	case []string:
		return types.NewStringList(types.DefaultTypeAdapter, x)
	case []any:
		out := make([]ref.Val, len(x))
		for i, e := range x {
			out[i] = celValue(e)
		}
		return types.NewRefValList(types.DefaultTypeAdapter, out)
	case []opFacts:
		out := make([]ref.Val, len(x))
		for i, e := range x {
			out[i] = celValue(e)
		}
		return types.NewRefValList(types.DefaultTypeAdapter, out)
	case map[string]string:
		return types.NewStringStringMap(types.DefaultTypeAdapter, x)
	case map[string]int64:
		out := make(map[ref.Val]ref.Val, len(x))
		for k, e := range x {
			out[types.String(k)] = types.Int(e)
		}
		return types.NewRefValMap(types.DefaultTypeAdapter, out)
	case map[string]any:
		// Fields convert when read.
		return types.NewStringInterfaceMap(types.DefaultTypeAdapter, x)
	case opFacts:
		// Operation rules read the same few fields many times: convert them all up front.
		conv := make(map[string]any, len(x))
		for k, e := range x {
			conv[k] = celValue(e)
		}
		return types.NewStringInterfaceMap(types.DefaultTypeAdapter, conv)
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}
