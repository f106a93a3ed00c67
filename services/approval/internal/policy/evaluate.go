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
	s := newState(cfg, in)
	defer s.release()
	d := p.decide(s, grant, now)
	d.PolicyHash = p.hash
	return d
}

// Explain is Evaluate with the facts the rules saw.
func (p *Policy) Explain(cfg domain.PolicyConfig, in domain.PolicyInput, grant *domain.Grant, now time.Time) (domain.Decision, map[string]any) {
	s := newState(cfg, in)
	defer s.release()
	d := p.decide(s, grant, now)
	d.PolicyHash = p.hash
	return d, s.facts()
}

func (p *Policy) decide(s *state, grant *domain.Grant, now time.Time) domain.Decision {
	// 1. deny: the first match refuses; the code's hard deny refuses whatever the rules say.
	if r, at, detail, ok := p.firstMatch(s, Deny); ok {
		if d, ok := r.builtinDenial(at); ok {
			return d
		}
		return domain.Decision{Outcome: domain.OutcomeRefused, Rule: r.Name, Reason: r.reason(detail)}
	}
	// The facts carry the built-in hard-deny checks' answers; no need to run them again.
	for i := range s.ops {
		if s.ops[i].denyPath != "" {
			return domain.Decided(domain.OutcomeRefused, domain.RuleHardDenyPath, s.ops[i].denyPathWhy)
		}
		if s.ops[i].denyCommand != "" {
			return domain.Decided(domain.OutcomeRefused, domain.RuleHardDenyCommand, s.ops[i].denyCommandWhy)
		}
	}
	// 2. require: every match is a hit; the built-in hard requirements are added. A shipped
	// rule's hit where the built-in check hits too is the built-in one: it says itself in the
	// reader's language.
	hits := p.requireHits(s)
	builtin := domain.HardRequireHits(s.cfg, s.in)
	for i, h := range hits {
		if b, ok := findHit(builtin, h); ok && p.shipped[h.Rule] {
			hits[i] = b
		}
	}
	for _, h := range builtin {
		if !containsHit(hits, h) {
			hits = append(hits, h)
		}
	}
	if len(hits) > 0 {
		return domain.PendingFor(hits)
	}
	// 3. allow: a rule allowance never covers a shell command.
	if r, ok := p.allowed(s); ok {
		for _, op := range s.in.Patch.Operations {
			if op.Type == patch.TypeShell {
				return domain.PendingFor([]domain.Hit{domain.NewHit(RuleShellNotByRule, op.Index,
					fmt.Sprintf("rule %s allows this patch, but operation %d is a shell command, which only an Auto-Approve grant with ops=shell covers", r.Name, op.Index+1),
					domain.CodeRequireShellByRule, r.Name, op.Index+1)})
			}
		}
		detail, _ := r.evalDetail(s)
		return domain.Decision{Outcome: domain.OutcomeAutoApproved, Rule: r.Name, Reason: r.reason(detail)}
	}
	// 4. Auto-Approve grant, 5. ask.
	return domain.GrantDecision(s.in, grant, now)
}

func containsHit(hits []domain.Hit, h domain.Hit) bool {
	_, ok := findHit(hits, h)
	return ok
}

// findHit is the hit of hits for h's rule on h's operation.
func findHit(hits []domain.Hit, h domain.Hit) (domain.Hit, bool) {
	for _, x := range hits {
		if x.Rule == h.Rule && x.Op == h.Op {
			return x, true
		}
	}
	return domain.Hit{}, false
}

// builtinDenial is the built-in hard deny's decision on the operation at, when r is the shipped
// rule that states that check and the check refuses at: its reason is the built-in one, said in
// the reader's language.
func (r *compiled) builtinDenial(at *opState) (domain.Decision, bool) {
	if !r.shipped || at == nil {
		return domain.Decision{}, false
	}
	switch {
	case r.Name == domain.RuleHardDenyPath && at.denyPath != "":
		return domain.Decided(domain.OutcomeRefused, r.Name, at.denyPathWhy), true
	case r.Name == domain.RuleHardDenyCommand && at.denyCommand != "":
		return domain.Decided(domain.OutcomeRefused, r.Name, at.denyCommandWhy), true
	}
	return domain.Decision{}, false
}

// firstMatch tries operation rules operation by operation, then patch rules; at is the
// operation the rule matched (nil for a patch rule).
func (p *Policy) firstMatch(s *state, kind string) (r *compiled, at *opState, detail string, ok bool) {
	defer func() { s.cur = nil }()
	if rules := p.opRules[kind]; len(rules) > 0 {
		for i := range s.ops {
			s.cur = &s.ops[i]
			for _, r := range rules {
				if r.matches(s) {
					detail, _ := r.evalDetail(s)
					return r, s.cur, detail, true
				}
			}
		}
	}
	s.cur = nil
	for _, r := range p.patchRules[kind] {
		if r.matches(s) {
			detail, _ := r.evalDetail(s)
			return r, nil, detail, true
		}
	}
	return nil, nil, "", false
}

func (p *Policy) requireHits(s *state) []domain.Hit {
	var hits []domain.Hit
	if rules := p.opRules[Require]; len(rules) > 0 {
		for i := range s.ops {
			s.cur = &s.ops[i]
			for _, r := range rules {
				if r.matches(s) {
					hits = append(hits, domain.Hit{Rule: r.Name, Op: s.cur.op.Index, Detail: r.hitDetail(s)})
				}
			}
		}
	}
	s.cur = nil
	for _, r := range p.patchRules[Require] {
		if r.matches(s) {
			hits = append(hits, domain.Hit{Rule: r.Name, Op: -1, Detail: r.hitDetail(s)})
		}
	}
	return hits
}

// allowed returns the first allow rule that matches: a patch rule, or an operation rule that
// matches every operation.
func (p *Policy) allowed(s *state) (*compiled, bool) {
	for _, r := range p.opRules[Allow] {
		all := len(s.ops) > 0
		for i := range s.ops {
			s.cur = &s.ops[i]
			if !r.matches(s) {
				all = false
				break
			}
		}
		s.cur = nil
		if all {
			return r, true
		}
	}
	for _, r := range p.patchRules[Allow] {
		if r.matches(s) {
			return r, true
		}
	}
	return nil, false
}

// matches evaluates the condition; an evaluation error (a missing key, a wrong type at run
// time) counts as a match for deny and require and as no match for allow: errors fail closed.
func (r *compiled) matches(s *state) bool {
	if r.fast != nil {
		return r.fast(s)
	}
	v, _, err := r.when.Eval(s)
	if err != nil {
		return r.Decision != Allow
	}
	b, ok := v.(types.Bool)
	if !ok {
		return r.Decision != Allow
	}
	return bool(b)
}

func (r *compiled) evalDetail(s *state) (string, error) {
	if r.detail == nil {
		return "", nil
	}
	v, _, err := r.detail.Eval(s)
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
func (r *compiled) hitDetail(s *state) string {
	if d, err := r.evalDetail(s); err == nil && d != "" {
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
