// Package policy is approval's policy as data: an ordered list of rules in a YAML file, each a
// CEL condition over facts computed from the patch, compiled once and evaluated per request.
// The built-in hard-deny and hard-require checks (domain.Floor) are enforced after the rules,
// so no policy file can make a hard-require operation automatic.
package policy

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"gopkg.in/yaml.v3"
)

//go:embed default.yaml
var defaultPolicy []byte

// DefaultSource returns the shipped default policy file (also config/policy.yaml).
func DefaultSource() []byte { return bytes.Clone(defaultPolicy) }

// Decision kinds of a rule.
const (
	Deny    = "deny"
	Require = "require"
	Allow   = "allow"
)

// Scopes of a rule.
const (
	ScopePatch     = "patch"
	ScopeOperation = "operation"
)

// File is the YAML policy file.
type File struct {
	Version int    `yaml:"version"`
	Rules   []Rule `yaml:"rules"`
}

// Rule is one rule of the policy file.
type Rule struct {
	Name string `yaml:"name"`
	// Scope is patch (default) or operation: an operation rule sees `op` and is tried on each
	// operation; an operation allow rule allows only when every operation matches.
	Scope string `yaml:"scope"`
	// When is a CEL expression of type bool.
	When     string `yaml:"when"`
	Decision string `yaml:"decision"`
	// Reason is text; "{detail}" in it is replaced by the value of Detail.
	Reason string `yaml:"reason"`
	// Detail is an optional CEL expression of type string.
	Detail string `yaml:"detail"`
}

var ruleName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,99}$`)

// RuleError names the rule (and field) a policy file is refused for.
type RuleError struct {
	Index int
	Rule  string
	Field string
	Err   error
}

func (e *RuleError) Error() string {
	name := e.Rule
	if name == "" {
		name = fmt.Sprintf("#%d", e.Index+1)
	}
	return fmt.Sprintf("rule %q: %s: %v", name, e.Field, e.Err)
}

func (e *RuleError) Unwrap() error { return e.Err }

type compiled struct {
	Rule
	when   cel.Program
	detail cel.Program
	// fast, when set, answers `when` without CEL: the shapes most rules have ("F" in op.flags,
	// "F" in flags, op.hard_deny_path != ""), checked on the facts computed once per request.
	fast func(*state) bool
	// shipped: the rule says what the shipped default's rule of its name says (its scope,
	// decision, reason and detail): it states a built-in check, whose own reason — said in the
	// reader's language — it gives where that check applies too. Any other rule's reason is its
	// author's words, shown as written.
	shipped bool
}

// Policy is a compiled policy file.
type Policy struct {
	hash  string
	rules []compiled
	// by decision and scope, in file order
	opRules, patchRules map[string][]*compiled
	// shipped names the rules that are the shipped default's (compiled.shipped).
	shipped map[string]bool
}

// Hash is "sha256:" and the hex sha256 of the policy file's bytes.
func (p *Policy) Hash() string { return p.hash }

// Rules returns the rules in file order.
func (p *Policy) Rules() []Rule {
	out := make([]Rule, len(p.rules))
	for i, r := range p.rules {
		out[i] = r.Rule
	}
	return out
}

func newEnv(withOp bool) (*cel.Env, error) {
	opts := []cel.EnvOption{
		cel.Variable("ops", cel.ListType(cel.DynType)),
		cel.Variable("kinds", cel.ListType(cel.StringType)),
		cel.Variable("paths", cel.ListType(cel.StringType)),
		cel.Variable("flags", cel.ListType(cel.StringType)),
		cel.Variable("stats", cel.MapType(cel.StringType, cel.IntType)),
		cel.Variable("route", cel.StringType),
		cel.Variable("task_type", cel.StringType),
		cel.Variable("requester", cel.StringType),
		cel.Variable("cost", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("limits", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("proposal_uses_browser", cel.BoolType),
		cel.Variable("unknown_blocks", cel.IntType),
		ext.Strings(),
	}
	if withOp {
		opts = append(opts, cel.Variable("op", cel.MapType(cel.StringType, cel.DynType)))
	}
	return cel.NewEnv(opts...)
}

// Parse compiles a policy file. Errors name the rule and the CEL error.
func Parse(data []byte) (*Policy, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("policy file: %w", err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("policy file: version must be 1, got %d", f.Version)
	}
	patchEnv, err := newEnv(false)
	if err != nil {
		return nil, fmt.Errorf("policy environment: %w", err)
	}
	opEnv, err := newEnv(true)
	if err != nil {
		return nil, fmt.Errorf("policy environment: %w", err)
	}
	sum := sha256.Sum256(data)
	p := &Policy{hash: "sha256:" + hex.EncodeToString(sum[:]), opRules: map[string][]*compiled{}, patchRules: map[string][]*compiled{},
		shipped: map[string]bool{}}
	defaults := shippedRules()
	seen := map[string]bool{}
	p.rules = make([]compiled, len(f.Rules))
	for i, r := range f.Rules {
		bad := func(field string, err error) error { return &RuleError{Index: i, Rule: r.Name, Field: field, Err: err} }
		if !ruleName.MatchString(r.Name) {
			return nil, bad("name", errors.New("must be 1-100 of a-z 0-9 _ . - starting with a letter or digit"))
		}
		if seen[r.Name] {
			return nil, bad("name", errors.New("used twice"))
		}
		seen[r.Name] = true
		env := patchEnv
		switch r.Scope {
		case "", ScopePatch:
			r.Scope = ScopePatch
		case ScopeOperation:
			env = opEnv
		default:
			return nil, bad("scope", fmt.Errorf("must be patch or operation, got %q", r.Scope))
		}
		switch r.Decision {
		case Deny, Require, Allow:
		default:
			return nil, bad("decision", fmt.Errorf("must be deny, require or allow, got %q", r.Decision))
		}
		if r.Reason == "" && r.Detail == "" {
			return nil, bad("reason", errors.New("a reason or a detail is required"))
		}
		c := compiled{Rule: r}
		if d, ok := defaults[r.Name]; ok && d.Scope == r.Scope && d.Decision == r.Decision && d.Reason == r.Reason && d.Detail == r.Detail {
			c.shipped = true
			p.shipped[r.Name] = true
		}
		if c.when, err = program(env, r.When, cel.BoolType); err != nil {
			return nil, bad("when", err)
		}
		c.fast = fastPath(r.Scope, r.When)
		if r.Detail != "" {
			if c.detail, err = program(env, r.Detail, cel.StringType); err != nil {
				return nil, bad("detail", err)
			}
		}
		p.rules[i] = c
	}
	for i := range p.rules {
		c := &p.rules[i]
		if c.Scope == ScopeOperation {
			p.opRules[c.Decision] = append(p.opRules[c.Decision], c)
		} else {
			p.patchRules[c.Decision] = append(p.patchRules[c.Decision], c)
		}
	}
	return p, nil
}

// shippedRules are the rules of the shipped default policy file by name, scopes filled in.
func shippedRules() map[string]Rule {
	var f File
	if err := yaml.Unmarshal(defaultPolicy, &f); err != nil {
		return nil // the shipped file parses: TestDefaultPolicyShipped
	}
	out := make(map[string]Rule, len(f.Rules))
	for _, r := range f.Rules {
		if r.Scope == "" {
			r.Scope = ScopePatch
		}
		out[r.Name] = r
	}
	return out
}

var (
	opFlagIn    = regexp.MustCompile(`^\s*(?:"([a-z0-9_]+)"|'([a-z0-9_]+)')\s+in\s+op\.flags\s*$`)
	patchFlagIn = regexp.MustCompile(`^\s*(?:"([a-z0-9_]+)"|'([a-z0-9_]+)')\s+in\s+flags\s*$`)
	opDenyField = regexp.MustCompile(`^\s*op\.(hard_deny_path|hard_deny_command)\s*!=\s*(?:""|'')\s*$`)
)

// fastPath recognises a condition whose answer the facts give directly; nil for any other.
// Such a condition cannot fail to evaluate (the fields always exist with these types), so the
// native answer equals CEL's.
func fastPath(scope, when string) func(*state) bool {
	flagOf := func(m []string) string { return m[1] + m[2] }
	if scope == ScopeOperation {
		if m := opFlagIn.FindStringSubmatch(when); m != nil {
			f := flagOf(m)
			return func(s *state) bool { return s.cur.hasFlag(f) }
		}
		if m := opDenyField.FindStringSubmatch(when); m != nil {
			if m[1] == "hard_deny_path" {
				return func(s *state) bool { return s.cur.denyPath != "" }
			}
			return func(s *state) bool { return s.cur.denyCommand != "" }
		}
		return nil
	}
	if m := patchFlagIn.FindStringSubmatch(when); m != nil {
		f := flagOf(m)
		return func(s *state) bool { return s.hasFlag(f) }
	}
	return nil
}

// program compiles and type-checks one expression; dyn results are checked when evaluated.
func program(env *cel.Env, expr string, want *cel.Type) (cel.Program, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, errors.New("empty expression")
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if out := ast.OutputType(); !out.IsExactType(want) && !out.IsExactType(types.DynType) {
		return nil, fmt.Errorf("must be of type %s, is %s", want, out)
	}
	prg, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, err
	}
	return prg, nil
}
