package domain

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

// Outcome of the policy evaluation.
type Outcome string

const (
	OutcomeRefused      Outcome = "refused"
	OutcomePending      Outcome = "pending"
	OutcomeAutoApproved Outcome = "auto_approved"
	// OutcomeAnswered: an answer without a patch, recorded as completed without execution.
	OutcomeAnswered Outcome = "answered"
)

// Policy rules. Each outcome names the rule that produced it.
const (
	RuleHardDenyPath         = "hard_deny.path"
	RuleHardDenyCommand      = "hard_deny.command"
	RuleHardRequire          = "hard_require." // + delete, rename, broad_overwrite, ...
	RuleCostOverLimit        = "hard_require.cost_over_limit"
	RuleUnknownBlocks        = "hard_require.unknown_blocks"
	RuleProposalBrowser      = "hard_require.browser_declared"
	RuleAutoApprove          = "auto_approve"
	RuleApproveSimilar       = "auto_approve.similar"
	RuleScopeTaskType        = "auto_approve.scope.task_type"
	RuleScopeRoute           = "auto_approve.scope.route"
	RuleScopePath            = "auto_approve.scope.path"
	RuleScopeDeniedOperation = "auto_approve.scope.denied_operation"
	RuleScopeOperation       = "auto_approve.scope.operation"
	RuleScopeShellCommand    = "auto_approve.scope.shell_command"
	RuleScopeOperationKind   = "auto_approve.scope.operation_kind"
	RuleAskNoGrant           = "ask.no_grant"
)

// OpsShell is the Auto-Approve scope value (`ops=shell`) that lets a grant cover shell
// commands; without it, or without a path scope, shell commands always wait for a person.
const OpsShell = "shell"

// GrantOperations are the values AllowedOperations may hold.
var GrantOperations = []string{OpsShell}

// hardRequireFlags are the flags that always need a person (SPEC §6), in reporting order. No
// grant and no rule makes them automatic.
var hardRequireFlags = []patch.Flag{patch.FlagDelete, patch.FlagRename, patch.FlagSendSensitive,
	patch.FlagPushPublic, patch.FlagForcePush, patch.FlagNetwork, patch.FlagExecuteScript, patch.FlagBrowser,
	patch.FlagRemoteCode, patch.FlagPrivilege, patch.FlagPermission, patch.FlagOutsideWorkspace,
	patch.FlagBackground, patch.FlagDynamicCommand, patch.FlagShellUnparsed}

// HardRequireFlags returns the flags that always need a person.
func HardRequireFlags() []patch.Flag { return slices.Clone(hardRequireFlags) }

// PolicyConfig is the static part of the policy.
type PolicyConfig struct {
	// HardDenyPaths refuse any operation touching a path under one of them at any depth
	// (".git/" refuses ".git/config" and "sub/.git/hooks/x"). Names are compared ignoring
	// letter case and trailing dots and spaces. A .git directory in any spelling is refused
	// whatever this list says.
	HardDenyPaths []string
	// HardDenyCommands are regular expressions refusing shell commands that match.
	HardDenyCommands []*regexp.Regexp
	CostLimitUSD     float64
	TokenLimit       int64
}

// PolicyInput is what the policy looks at: the patch as parsed by approval, never the
// proposal's own risk claims (except to be stricter).
type PolicyInput struct {
	Patch               *patch.Patch
	TaskType            string
	Route               string
	Cost                CostHint
	ProposalUsesBrowser bool
	// Requester is the id of who asked (a policy rule may look at it).
	Requester string
}

// Hit is one rule that matched, with the operation it matched on (-1 for the whole patch).
type Hit struct {
	Rule   string `json:"rule"`
	Op     int    `json:"op"`
	Detail string `json:"detail"`
}

// Decision is the policy's answer: the outcome, the rule that decided it, a reason and every
// hard-require hit (for the approval message).
type Decision struct {
	Outcome Outcome
	Rule    string
	Reason  string
	Hits    []Hit
	// GrantID is the grant that auto-approved, when Outcome is auto_approved.
	GrantID string
	// PolicyHash names the policy file that decided (empty for the built-in Evaluate).
	PolicyHash string
}

// Evaluate runs the fixed order hard-deny → hard-require → Auto-Approve → ask over every
// operation. grant is nil when Auto-Approve is off (or its store is unreachable). It is the
// built-in policy; the rule engine (internal/policy) reproduces it from the default policy file
// and enforces its first two steps (Floor) whatever a policy file says.
func Evaluate(cfg PolicyConfig, in PolicyInput, grant *Grant, now time.Time) Decision {
	if d := Floor(cfg, in); d.Outcome != "" {
		return d
	}
	return GrantDecision(in, grant, now)
}

// Floor is the hard-deny and hard-require part of the policy: a refusal, a pending decision
// with every hard-require hit, or the zero Decision when neither applies.
func Floor(cfg PolicyConfig, in PolicyInput) Decision {
	if d, ok := HardDeny(cfg, in); ok {
		return d
	}
	if hits := HardRequireHits(cfg, in); len(hits) > 0 {
		return PendingFor(hits)
	}
	return Decision{}
}

// HardDeny returns the refusal of the first operation that touches a .git directory, a
// hard-deny path or runs a hard-deny command.
func HardDeny(cfg PolicyConfig, in PolicyInput) (Decision, bool) {
	for _, op := range in.Patch.Operations {
		if reason, ok := DeniedPathReason(cfg, op); ok {
			return Decision{Outcome: OutcomeRefused, Rule: RuleHardDenyPath, Reason: reason}, true
		}
		if reason := DeniedCommandReason(cfg, op); reason != "" {
			return Decision{Outcome: OutcomeRefused, Rule: RuleHardDenyCommand, Reason: reason}, true
		}
	}
	return Decision{}, false
}

// DeniedPathReason says why op touches a path that is never allowed: inside a .git directory
// (in any spelling) or under a hard-deny path.
func DeniedPathReason(cfg PolicyConfig, op patch.Operation) (string, bool) {
	return DeniedPathReasonOf(cfg, op, patch.OperationPaths(op))
}

// DeniedPathReasonOf is DeniedPathReason with the operation's paths already known.
func DeniedPathReasonOf(cfg PolicyConfig, op patch.Operation, paths []string) (string, bool) {
	if op.HasFlag(patch.FlagGitInternals) {
		return fmt.Sprintf("operation %d (%s %s) writes inside a .git directory, which is never allowed", op.Index+1, op.Type, op.Action), true
	}
	for _, p := range paths {
		if patch.TouchesGitDir(p) {
			return fmt.Sprintf("operation %d (%s %s) touches %s, inside a .git directory, which is never allowed", op.Index+1, op.Type, op.Action, p), true
		}
		for _, deny := range cfg.HardDenyPaths {
			if pathUnderAnyDepth(p, deny) {
				return fmt.Sprintf("operation %d (%s %s) touches %s, which is never allowed (%s)", op.Index+1, op.Type, op.Action, p, deny), true
			}
		}
	}
	return "", false
}

// DeniedCommandReason says which hard-deny pattern a shell operation matches, or "".
func DeniedCommandReason(cfg PolicyConfig, op patch.Operation) string {
	if op.Type != patch.TypeShell {
		return ""
	}
	for _, re := range cfg.HardDenyCommands {
		if re.MatchString(op.Target + " " + op.Content) {
			return fmt.Sprintf("operation %d runs a command matching the refused pattern %q", op.Index+1, re.String())
		}
	}
	return ""
}

// HardRequireHits lists every hard-require hit in operation order, then the patch-wide ones.
func HardRequireHits(cfg PolicyConfig, in PolicyInput) []Hit {
	var hits []Hit
	for _, op := range in.Patch.Operations {
		for _, f := range hardRequireFlags {
			if op.HasFlag(f) {
				hits = append(hits, Hit{Rule: RuleHardRequire + string(f), Op: op.Index, Detail: HitDetail(op, f)})
			}
		}
	}
	if in.Patch.HasFlag(patch.FlagBroadOverwrite) {
		hits = append(hits, Hit{Rule: RuleHardRequire + string(patch.FlagBroadOverwrite), Op: -1,
			Detail: fmt.Sprintf("%d files written", in.Patch.Stats.Files)})
	}
	if CostOverLimit(cfg, in.Cost) {
		hits = append(hits, Hit{Rule: RuleCostOverLimit, Op: -1, Detail: CostDetail(cfg, in.Cost)})
	}
	if in.ProposalUsesBrowser && !in.Patch.HasFlag(patch.FlagBrowser) {
		hits = append(hits, Hit{Rule: RuleProposalBrowser, Op: -1, Detail: "the proposal declares browser use"})
	}
	if len(in.Patch.Unknown) > 0 {
		hits = append(hits, Hit{Rule: RuleUnknownBlocks, Op: -1, Detail: fmt.Sprintf("%d blocks not understood", len(in.Patch.Unknown))})
	}
	return hits
}

// CostOverLimit reports whether the estimate exceeds a configured limit.
func CostOverLimit(cfg PolicyConfig, c CostHint) bool {
	return (cfg.CostLimitUSD > 0 && c.EstimatedCostUSD > cfg.CostLimitUSD) || (cfg.TokenLimit > 0 && c.EstimatedTokens > cfg.TokenLimit)
}

// CostDetail states the estimate against the limits.
func CostDetail(cfg PolicyConfig, c CostHint) string {
	return fmt.Sprintf("estimate $%.2f / %d tokens, limit $%.2f / %d tokens", c.EstimatedCostUSD, c.EstimatedTokens, cfg.CostLimitUSD, cfg.TokenLimit)
}

// PendingFor is the decision of a job that needs a person; the first hit decides.
func PendingFor(hits []Hit) Decision {
	return Decision{Outcome: OutcomePending, Rule: hits[0].Rule, Hits: hits,
		Reason: fmt.Sprintf("needs a person: %s (%s)", hits[0].Rule, hits[0].Detail)}
}

// GrantDecision is the Auto-Approve step: auto-approved within an active grant's scope,
// otherwise pending with the scope rule that stopped it.
func GrantDecision(in PolicyInput, grant *Grant, now time.Time) Decision {
	if grant == nil || !grant.ActiveAt(now) {
		return Decision{Outcome: OutcomePending, Rule: RuleAskNoGrant, Reason: "Auto-Approve is off"}
	}
	if rule, reason := grant.Covers(in); rule != "" {
		return Decision{Outcome: OutcomePending, Rule: rule, Reason: reason}
	}
	return Decision{Outcome: OutcomeAutoApproved, Rule: RuleAutoApprove, GrantID: grant.ID,
		Reason: fmt.Sprintf("within the Auto-Approve grant %s until %s", grant.ID, grant.ExpiresAt.UTC().Format(time.RFC3339))}
}

// HitDetail says what in the operation raised f: the exact push command, the shell command
// the analyzer pointed at, or the operation itself.
func HitDetail(op patch.Operation, f patch.Flag) string {
	switch op.Type {
	case patch.TypeGit:
		if push, err := patch.PushOf(op); err == nil {
			return push.Command()
		}
	case patch.TypeShell:
		if d := patch.AnalyzeShell(patch.ShellScript(op)).Detail(f); d != "" {
			return d
		}
	}
	return fmt.Sprintf("%s %s %s", op.Type, op.Action, op.Target)
}

// pathUnderAnyDepth reports whether p has deny as a component-aligned sub-path anywhere.
// Components compare as a case-insensitive file system would see them (letter case, trailing
// dots and spaces ignored), so "Secrets/" and "secrets./" do not slip past "secrets/".
func pathUnderAnyDepth(p, deny string) bool {
	// Compared component by component without splitting: this runs for every path of every
	// operation against every hard-deny entry.
	want := strings.Trim(deny, "/")
	for want != "" && strings.Contains(want, "//") {
		want = strings.ReplaceAll(want, "//", "/")
	}
	if want == "" {
		return false
	}
	rest := p
	for {
		if componentsMatch(rest, want) {
			return true
		}
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
	}
}

// componentsMatch reports whether the leading components of have match every component of want.
func componentsMatch(have, want string) bool {
	for want != "" {
		w, wrest, _ := strings.Cut(want, "/")
		h, hrest, hmore := strings.Cut(have, "/")
		if !sameName(h, w) {
			return false
		}
		want = wrest
		if want != "" && !hmore {
			return false
		}
		have = hrest
	}
	return true
}

func sameName(a, b string) bool {
	if patch.IsGitDirName(b) {
		return patch.IsGitDirName(a)
	}
	return strings.EqualFold(strings.TrimRight(a, ". "), strings.TrimRight(b, ". "))
}

// Grant is the active Auto-Approve policy; its lifetime is the Redis key's TTL.
type Grant struct {
	ID               string   `json:"id"`
	TaskTypes        []string `json:"task_types,omitempty"`
	Routes           []string `json:"routes,omitempty"`
	PathPrefixes     []string `json:"path_prefixes,omitempty"`
	DeniedOperations []string `json:"denied_operations,omitempty"`
	// AllowedOperations opts in to operations a grant never covers otherwise: "shell".
	AllowedOperations []string `json:"allowed_operations,omitempty"`
	// OperationKinds, when set, are the only operation kinds ("file_edit.update") covered.
	OperationKinds []string `json:"operation_kinds,omitempty"`
	// SimilarTo is the job an "approve similar" grant was scoped from.
	SimilarTo string `json:"similar_to,omitempty"`
	// DefaultScope: the grant was asked for without a scope (a bare /auto-approve on) and got
	// approval.auto_approve.default_scope.
	DefaultScope bool      `json:"default_scope,omitempty"`
	CreatedBy    Actor     `json:"created_by"`
	Reason       string    `json:"reason,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	ExpiresAt    time.Time `json:"expires_at"`
}

// ActiveAt reports whether the grant applies at now (the Redis TTL normally removes it first).
func (g *Grant) ActiveAt(now time.Time) bool { return g != nil && now.Before(g.ExpiresAt) }

// Covers checks every operation against the scope. Empty lists do not restrict; with path
// prefixes set, an operation whose paths cannot be known (browser, push) is out of scope.
// Shell commands are covered only when the grant names them (ops=shell), has a path scope, the
// script runs only commands known not to run other code (patch.AnalyzeShellAutomation) and
// every path it writes is within the path scope; the hard-require flags of risky shell
// constructs were already handled before.
func (g *Grant) Covers(in PolicyInput) (rule, reason string) {
	if len(g.TaskTypes) > 0 && !slices.Contains(g.TaskTypes, in.TaskType) {
		return RuleScopeTaskType, fmt.Sprintf("task type %q is not in the grant (%s)", in.TaskType, strings.Join(g.TaskTypes, ", "))
	}
	if len(g.Routes) > 0 && !slices.Contains(g.Routes, in.Route) {
		return RuleScopeRoute, fmt.Sprintf("route %q is not in the grant (%s)", in.Route, strings.Join(g.Routes, ", "))
	}
	for _, op := range in.Patch.Operations {
		if len(g.OperationKinds) > 0 && !slices.Contains(g.OperationKinds, string(op.Type)+"."+op.Action) {
			return RuleScopeOperationKind, fmt.Sprintf("operation %d (%s.%s) is not a kind the grant covers (%s)", op.Index+1, op.Type, op.Action, strings.Join(g.OperationKinds, ", "))
		}
		for _, d := range g.DeniedOperations {
			if d == string(op.Type) || d == op.Action || d == string(op.Type)+"."+op.Action || op.HasFlag(patch.Flag(d)) {
				return RuleScopeDeniedOperation, fmt.Sprintf("operation %d (%s %s) is denied by the grant (%s)", op.Index+1, op.Type, op.Action, d)
			}
		}
		if op.Type == patch.TypeShell {
			if !slices.Contains(g.AllowedOperations, OpsShell) {
				return RuleScopeOperation, fmt.Sprintf("operation %d is a shell command; the grant does not name shell (ops=shell)", op.Index+1)
			}
			if len(g.PathPrefixes) == 0 {
				return RuleScopeOperation, fmt.Sprintf("operation %d is a shell command; a grant without a path scope never covers shell", op.Index+1)
			}
			auto := patch.AnalyzeShellAutomation(patch.ShellScript(op))
			if !auto.OK {
				return RuleScopeShellCommand, fmt.Sprintf("operation %d is a shell command that always needs approval: %s", op.Index+1, auto.Reason)
			}
			for _, w := range auto.Writes {
				p, ok := workspaceRelative(w)
				if !ok {
					return RuleScopePath, fmt.Sprintf("operation %d writes %s, outside the workspace", op.Index+1, w)
				}
				if !g.coversPath(p) {
					return RuleScopePath, fmt.Sprintf("operation %d writes %s, outside the grant's paths (%s)", op.Index+1, p, strings.Join(g.PathPrefixes, ", "))
				}
			}
			continue
		}
		if len(g.PathPrefixes) == 0 {
			continue
		}
		paths := patch.OperationPaths(op)
		if len(paths) == 0 && !(op.Type == patch.TypeGit && op.Action == patch.ActionGitCommit) {
			return RuleScopePath, fmt.Sprintf("operation %d (%s %s) has no workspace path the grant could cover", op.Index+1, op.Type, op.Action)
		}
		for _, p := range paths {
			if !g.coversPath(p) {
				return RuleScopePath, fmt.Sprintf("operation %d touches %s, outside the grant's paths (%s)", op.Index+1, p, strings.Join(g.PathPrefixes, ", "))
			}
		}
	}
	return "", ""
}

// coversPath reports whether p is under one of the grant's path prefixes.
func (g *Grant) coversPath(p string) bool {
	for _, prefix := range g.PathPrefixes {
		if patch.HasPathPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// workspaceRelative cleans a path a shell command writes, relative to the workspace; absolute
// paths and paths climbing out with ".." are outside.
func workspaceRelative(p string) (string, bool) {
	c := path.Clean(p)
	if path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	return c, true
}
