package policy

import (
	"errors"
	"reflect"
	"slices"
	"sync"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Facts are what rules see: computed by approval from the patch itself and the request, never
// taken from the proposal's own risk claims. The keys are the CEL variable names (docs/security.md
// lists them).
type Facts map[string]any

// state is one evaluation: the facts computed once from the request, converted to CEL values
// only when a rule first reads them. It is the activation of every rule (ResolveName) and is
// reused through a pool, so a decision allocates little beyond what the rules read.
type state struct {
	cfg   domain.PolicyConfig
	in    domain.PolicyInput
	ops   []opState
	kinds []string
	flags []string
	// cur is the operation under test (the variable `op`), nil for patch rules.
	cur *opState

	vars    [numVars]ref.Val
	opsList ref.Val
	// limitsVal is the CEL value of `limits` for limitsFor; it outlives release.
	limitsVal ref.Val
	limitsFor [2]float64
}

// Patch-level variables, in the order of vars.
const (
	varKinds = iota
	varPaths
	varFlags
	varStats
	varRoute
	varTaskType
	varRequester
	varCost
	varLimits
	varProposalBrowser
	varUnknownBlocks
	numVars
)

var varIndex = map[string]int{
	"kinds": varKinds, "paths": varPaths, "flags": varFlags, "stats": varStats, "route": varRoute,
	"task_type": varTaskType, "requester": varRequester, "cost": varCost, "limits": varLimits,
	"proposal_uses_browser": varProposalBrowser, "unknown_blocks": varUnknownBlocks,
}

var statePool = sync.Pool{New: func() any { return &state{} }}

// newState computes the facts of a request.
func newState(cfg domain.PolicyConfig, in domain.PolicyInput) *state {
	s := statePool.Get().(*state)
	s.cfg, s.in = cfg, in
	p := in.Patch
	if cap(s.ops) < len(p.Operations) {
		s.ops = make([]opState, len(p.Operations))
	}
	s.ops = s.ops[:len(p.Operations)]
	s.kinds = s.kinds[:0]
	for i := range p.Operations {
		op := &p.Operations[i]
		o := &s.ops[i]
		*o = opState{op: op, kind: kindOf(op), flags: o.flags[:0], paths: patch.AppendOperationPaths(o.paths[:0], *op)}
		for _, f := range op.Flags {
			o.flags = append(o.flags, string(f))
		}
		if why, ok := domain.DeniedPath(cfg, *op, o.paths); ok {
			o.denyPathWhy, o.denyPath = why, why.English()
		}
		if why, ok := domain.DeniedCommand(cfg, *op); ok {
			o.denyCommandWhy, o.denyCommand = why, why.English()
		}
		if !slices.Contains(s.kinds, o.kind) {
			s.kinds = append(s.kinds, o.kind)
		}
	}
	s.flags = s.flags[:0]
	for _, f := range p.Flags {
		s.flags = append(s.flags, string(f))
	}
	return s
}

// release returns the state to the pool; nothing read from it may be kept.
func (s *state) release() {
	for i := range s.ops {
		s.ops[i] = opState{flags: s.ops[i].flags[:0], paths: s.ops[i].paths[:0]}
	}
	s.vars = [numVars]ref.Val{}
	s.opsList, s.cur = nil, nil
	s.cfg, s.in = domain.PolicyConfig{}, domain.PolicyInput{}
	statePool.Put(s)
}

func (s *state) ResolveName(name string) (any, bool) {
	switch name {
	case "op":
		if s.cur == nil {
			return nil, false
		}
		return s.cur, true
	case "ops":
		if s.opsList == nil {
			vals := make([]ref.Val, len(s.ops))
			for i := range s.ops {
				vals[i] = &s.ops[i]
			}
			s.opsList = types.NewRefValList(types.DefaultTypeAdapter, vals)
		}
		return s.opsList, true
	}
	i, ok := varIndex[name]
	if !ok {
		return nil, false
	}
	if s.vars[i] == nil {
		s.vars[i] = s.patchVar(i)
	}
	return s.vars[i], true
}

func (s *state) Parent() interpreter.Activation { return nil }

func (s *state) patchVar(i int) ref.Val {
	p := s.in.Patch
	switch i {
	case varKinds:
		return types.NewStringList(types.DefaultTypeAdapter, s.kinds)
	case varPaths:
		return types.NewStringList(types.DefaultTypeAdapter, nonNil(p.AffectedPaths))
	case varFlags:
		return types.NewStringList(types.DefaultTypeAdapter, s.flags)
	case varStats:
		return types.NewRefValMap(types.DefaultTypeAdapter, map[ref.Val]ref.Val{
			types.String("files"): types.Int(p.Stats.Files), types.String("additions"): types.Int(p.Stats.Additions),
			types.String("deletions"): types.Int(p.Stats.Deletions), types.String("operations"): types.Int(len(p.Operations))})
	case varRoute:
		return types.String(s.in.Route)
	case varTaskType:
		return types.String(s.in.TaskType)
	case varRequester:
		return types.String(s.in.Requester)
	case varCost:
		return types.NewStringInterfaceMap(types.DefaultTypeAdapter, s.costFact())
	case varLimits:
		// The limits change only with the configuration: a pooled state keeps their value.
		if s.limitsVal == nil || s.limitsFor != [2]float64{s.cfg.CostLimitUSD, float64(s.cfg.TokenLimit)} {
			s.limitsFor = [2]float64{s.cfg.CostLimitUSD, float64(s.cfg.TokenLimit)}
			s.limitsVal = types.NewStringInterfaceMap(types.DefaultTypeAdapter, s.limitsFact())
		}
		return s.limitsVal
	case varProposalBrowser:
		return types.Bool(s.in.ProposalUsesBrowser)
	case varUnknownBlocks:
		return types.Int(len(p.Unknown))
	}
	return types.NewErr("unknown variable")
}

func (s *state) costFact() map[string]any {
	c := s.in.Cost
	return map[string]any{"usd": c.EstimatedCostUSD, "tokens": c.EstimatedTokens, "near_limit": c.NearLimit}
}

func (s *state) limitsFact() map[string]any {
	return map[string]any{"cost_usd": s.cfg.CostLimitUSD, "tokens": s.cfg.TokenLimit}
}

// hasFlag reports whether the patch carries flag f.
func (s *state) hasFlag(f string) bool { return slices.Contains(s.flags, f) }

// facts is the whole fact set as plain values (what the simulator shows).
func (s *state) facts() Facts {
	p := s.in.Patch
	list := make([]any, len(s.ops))
	for i := range s.ops {
		list[i] = s.ops[i].factsMap()
	}
	return Facts{
		"ops":   list,
		"kinds": cloneList(s.kinds),
		"paths": cloneList(p.AffectedPaths),
		"flags": cloneList(s.flags),
		"stats": map[string]int64{"files": int64(p.Stats.Files), "additions": int64(p.Stats.Additions),
			"deletions": int64(p.Stats.Deletions), "operations": int64(len(p.Operations))},
		"route":                 s.in.Route,
		"task_type":             s.in.TaskType,
		"requester":             s.in.Requester,
		"cost":                  s.costFact(),
		"limits":                s.limitsFact(),
		"proposal_uses_browser": s.in.ProposalUsesBrowser,
		"unknown_blocks":        int64(len(p.Unknown)),
	}
}

// kindNames remembers each operation kind's string ("file_edit.update"): the parser admits a
// small fixed set of types and actions, and building the string on every evaluation allocates.
var kindNames struct {
	sync.RWMutex
	m map[[2]string]string
}

func kindOf(op *patch.Operation) string {
	key := [2]string{string(op.Type), op.Action}
	kindNames.RLock()
	k, ok := kindNames.m[key]
	kindNames.RUnlock()
	if ok {
		return k
	}
	k = string(op.Type) + "." + op.Action
	kindNames.Lock()
	if kindNames.m == nil {
		kindNames.m = map[[2]string]string{}
	}
	if len(kindNames.m) < 256 {
		kindNames.m[key] = k
	}
	kindNames.Unlock()
	return k
}

// cloneList copies a list for the facts shown outside; never nil, so it shows as [].
func cloneList(s []string) []string { return append([]string{}, s...) }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// opState is one operation's facts, the CEL value `op` (and each element of `ops`): a map whose
// fields are converted when a rule reads them.
type opState struct {
	op           *patch.Operation
	kind         string
	paths, flags []string
	// denyPath and denyCommand are the built-in hard-deny checks' reasons in English (the
	// facts rules see), denyPathWhy and denyCommandWhy the same as codes.
	denyPath, denyCommand       string
	denyPathWhy, denyCommandWhy domain.Because
	fields                      [numOpFields]ref.Val
}

// Fields of an operation, in the order of opState.fields.
const (
	opNumber = iota
	opIndex
	opType
	opAction
	opKind
	opTarget
	opPaths
	opFlags
	opDetails
	opHardDenyPath
	opHardDenyCommand
	numOpFields
)

var opFieldNames = [numOpFields]string{"number", "index", "type", "action", "kind", "target", "paths", "flags",
	"details", "hard_deny_path", "hard_deny_command"}

func opField(name string) (int, bool) {
	for i, n := range opFieldNames {
		if n == name {
			return i, true
		}
	}
	return 0, false
}

func (o *opState) hasFlag(f string) bool { return slices.Contains(o.flags, f) }

func (o *opState) details() map[string]string {
	d := make(map[string]string, len(o.op.Flags))
	for _, f := range o.op.Flags {
		d[string(f)] = domain.HitDetail(*o.op, f)
	}
	return d
}

func (o *opState) field(i int) ref.Val {
	if v := o.fields[i]; v != nil {
		return v
	}
	var v ref.Val
	switch i {
	case opNumber:
		v = types.Int(o.op.Index + 1)
	case opIndex:
		v = types.Int(o.op.Index)
	case opType:
		v = types.String(o.op.Type)
	case opAction:
		v = types.String(o.op.Action)
	case opKind:
		v = types.String(o.kind)
	case opTarget:
		v = types.String(o.op.Target)
	case opPaths:
		v = types.NewStringList(types.DefaultTypeAdapter, nonNil(o.paths))
	case opFlags:
		v = types.NewStringList(types.DefaultTypeAdapter, o.flags)
	case opDetails:
		v = types.NewStringStringMap(types.DefaultTypeAdapter, o.details())
	case opHardDenyPath:
		v = types.String(o.denyPath)
	case opHardDenyCommand:
		v = types.String(o.denyCommand)
	}
	o.fields[i] = v
	return v
}

func (o *opState) factsMap() map[string]any {
	return map[string]any{
		"number": int64(o.op.Index + 1), "index": int64(o.op.Index), "type": string(o.op.Type), "action": o.op.Action,
		"kind": o.kind, "target": o.op.Target, "paths": cloneList(o.paths), "flags": cloneList(o.flags),
		"details": o.details(), "hard_deny_path": o.denyPath, "hard_deny_command": o.denyCommand,
	}
}

// opState is a CEL map value (string keys, dyn values).
var (
	_ ref.Val       = (*opState)(nil)
	_ traits.Mapper = (*opState)(nil)
)

var errOpNative = errors.New("an operation's facts do not convert to native values")

func (o *opState) ConvertToNative(t reflect.Type) (any, error) {
	if t.Kind() == reflect.Interface || t == reflect.TypeOf(map[string]any(nil)) {
		return o.factsMap(), nil
	}
	return nil, errOpNative
}

func (o *opState) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.MapType:
		return o
	case types.TypeType:
		return types.MapType
	}
	return types.NewErr("type conversion error from map to '%s'", t)
}

func (o *opState) Equal(other ref.Val) ref.Val {
	x, ok := other.(*opState)
	return types.Bool(ok && x == o)
}

func (o *opState) Type() ref.Type { return types.MapType }
func (o *opState) Value() any     { return o.factsMap() }

func (o *opState) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		return nil, false
	}
	i, ok := opField(string(k))
	if !ok {
		return nil, false
	}
	return o.field(i), true
}

func (o *opState) Contains(key ref.Val) ref.Val {
	_, ok := o.Find(key)
	return types.Bool(ok)
}

func (o *opState) Get(key ref.Val) ref.Val {
	if v, ok := o.Find(key); ok {
		return v
	}
	return types.NewErr("no such key: %v", key)
}

func (o *opState) Size() ref.Val { return types.Int(numOpFields) }

func (o *opState) Iterator() traits.Iterator {
	keys := make([]ref.Val, numOpFields)
	for i, n := range opFieldNames {
		keys[i] = types.String(n)
	}
	return types.NewRefValList(types.DefaultTypeAdapter, keys).(traits.Lister).Iterator()
}
