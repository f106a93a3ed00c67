package policy

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// RuleShellNotByRule is the requirement the code adds when an allow rule would approve a shell
// command: only an Auto-Approve grant that names ops=shell covers shell.
const RuleShellNotByRule = "hard_require.shell_without_ops"

// Evaluate decides a request: the rules (deny, then require, then allow), the built-in floor,
// then an active Auto-Approve grant, then ask. The decision names the deciding rule and the
// policy's hash.
func (p *Policy) Evaluate(cfg domain.PolicyConfig, in domain.PolicyInput, grant *domain.Grant, now time.Time) domain.Decision {
	d, _ := p.Explain(cfg, in, grant, now)
	return d
}

// Explain is Evaluate with the facts the rules saw.
func (p *Policy) Explain(cfg domain.PolicyConfig, in domain.PolicyInput, grant *domain.Grant, now time.Time) (domain.Decision, map[string]any) {
	facts, ops := buildFacts(cfg, in)
	d := p.decide(cfg, in, facts, ops, grant, now)
	d.PolicyHash = p.hash
	return d, facts
}

func (p *Policy) decide(cfg domain.PolicyConfig, in domain.PolicyInput, facts Facts, opFs []opFacts, grant *domain.Grant, now time.Time) domain.Decision {
	act := newActivation(facts)
	ops := make([]opVal, len(opFs))
	for i := range opFs {
		ops[i] = opVal{val: celValue(opFs[i]), index: int(opFs[i]["index"].(int64))}
	}
	// 1. deny: the first match refuses; the code's hard deny refuses whatever the rules say.
	if r, detail, ok := p.firstMatch(act, ops, Deny); ok {
		return domain.Decision{Outcome: domain.OutcomeRefused, Rule: r.Name, Reason: r.reason(detail)}
	}
	// The facts carry the built-in hard-deny checks' answers; no need to run them again.
	for _, op := range opFs {
		if r := op["hard_deny_path"].(string); r != "" {
			return domain.Decision{Outcome: domain.OutcomeRefused, Rule: domain.RuleHardDenyPath, Reason: r}
		}
		if r := op["hard_deny_command"].(string); r != "" {
			return domain.Decision{Outcome: domain.OutcomeRefused, Rule: domain.RuleHardDenyCommand, Reason: r}
		}
	}
	// 2. require: every match is a hit; the built-in hard requirements are added.
	hits := p.requireHits(act, ops)
	for _, h := range domain.HardRequireHits(cfg, in) {
		if !containsHit(hits, h) {
			hits = append(hits, h)
		}
	}
	if len(hits) > 0 {
		return domain.PendingFor(hits)
	}
	// 3. allow: a rule allowance never covers a shell command.
	if r, ok := p.allowed(act, ops); ok {
		for _, op := range in.Patch.Operations {
			if op.Type == patch.TypeShell {
				return domain.PendingFor([]domain.Hit{{Rule: RuleShellNotByRule, Op: op.Index,
					Detail: fmt.Sprintf("rule %s allows this patch, but operation %d is a shell command, which only an Auto-Approve grant with ops=shell covers", r.Name, op.Index+1)}})
			}
		}
		detail, _ := r.evalDetail(act)
		return domain.Decision{Outcome: domain.OutcomeAutoApproved, Rule: r.Name, Reason: r.reason(detail)}
	}
	// 4. Auto-Approve grant, 5. ask.
	return domain.GrantDecision(in, grant, now)
}

// opVal is one operation's facts as a CEL value, and its index.
type opVal struct {
	val   ref.Val
	index int
}

func containsHit(hits []domain.Hit, h domain.Hit) bool {
	for _, x := range hits {
		if x.Rule == h.Rule && x.Op == h.Op {
			return true
		}
	}
	return false
}

// firstMatch tries operation rules operation by operation, then patch rules.
func (p *Policy) firstMatch(act *activation, ops []opVal, kind string) (*compiled, string, bool) {
	for _, op := range ops {
		act.op = op.val
		for _, r := range p.opRules[kind] {
			if r.matches(act) {
				detail, _ := r.evalDetail(act)
				act.op = nil
				return r, detail, true
			}
		}
	}
	act.op = nil
	for _, r := range p.patchRules[kind] {
		if r.matches(act) {
			detail, _ := r.evalDetail(act)
			return r, detail, true
		}
	}
	return nil, "", false
}

func (p *Policy) requireHits(act *activation, ops []opVal) []domain.Hit {
	var hits []domain.Hit
	for _, op := range ops {
		act.op = op.val
		for _, r := range p.opRules[Require] {
			if r.matches(act) {
				hits = append(hits, domain.Hit{Rule: r.Name, Op: op.index, Detail: r.hitDetail(act)})
			}
		}
	}
	act.op = nil
	for _, r := range p.patchRules[Require] {
		if r.matches(act) {
			hits = append(hits, domain.Hit{Rule: r.Name, Op: -1, Detail: r.hitDetail(act)})
		}
	}
	return hits
}

// allowed returns the first allow rule that matches: a patch rule, or an operation rule that
// matches every operation.
func (p *Policy) allowed(act *activation, ops []opVal) (*compiled, bool) {
	for _, r := range p.opRules[Allow] {
		all := len(ops) > 0
		for _, op := range ops {
			act.op = op.val
			if !r.matches(act) {
				all = false
				break
			}
		}
		act.op = nil
		if all {
			return r, true
		}
	}
	for _, r := range p.patchRules[Allow] {
		if r.matches(act) {
			return r, true
		}
	}
	return nil, false
}

// matches evaluates the condition; an evaluation error (a missing key, a wrong type at run
// time) counts as a match for deny and require and as no match for allow: errors fail closed.
func (r *compiled) matches(act *activation) bool {
	v, _, err := r.when.Eval(act)
	if err != nil {
		return r.Decision != Allow
	}
	b, ok := v.(types.Bool)
	if !ok {
		return r.Decision != Allow
	}
	return bool(b)
}

func (r *compiled) evalDetail(act *activation) (string, error) {
	if r.detail == nil {
		return "", nil
	}
	v, _, err := r.detail.Eval(act)
	if err != nil {
		return "", err
	}
	return valueString(v), nil
}

func valueString(v ref.Val) string {
	if s, ok := v.(types.String); ok {
		return string(s)
	}
	return fmt.Sprint(v.Value())
}

// hitDetail is what the approval message shows for a requirement: the detail, else the reason.
func (r *compiled) hitDetail(act *activation) string {
	if d, err := r.evalDetail(act); err == nil && d != "" {
		return d
	}
	if r.Reason != "" {
		return r.Reason
	}
	return r.Name
}

func (r *compiled) reason(detail string) string {
	if r.Reason == "" {
		return detail
	}
	return strings.ReplaceAll(r.Reason, "{detail}", detail)
}
