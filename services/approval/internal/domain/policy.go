package domain

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
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

// Hit is one rule that matched, with the operation it matched on (-1 for the whole patch). Detail
// is what in the patch raised it, in English (an operator's rule: its own words); a built-in
// requirement also says itself as a code of Texts with arguments (Code, Args: TextIn).
type Hit struct {
	Rule   string   `json:"rule"`
	Op     int      `json:"op"`
	Detail string   `json:"detail"`
	Code   string   `json:"code,omitempty"`
	Args   []string `json:"args,omitempty"`
}

// Decision is the policy's answer: the outcome, the rule that decided it, a reason and every
// hard-require hit (for the approval message). Reason is in English (the audit log's text); a
// built-in rule's reason is also a code of Texts with arguments (ReasonCode, ReasonArgs), said
// in the reader's language by ReasonIn. An operator's rule has no code: its reason is its own.
type Decision struct {
	Outcome    Outcome
	Rule       string
	Reason     string
	ReasonCode string
	ReasonArgs []string
	Hits       []Hit
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
		if why, ok := DeniedPath(cfg, op, patch.OperationPaths(op)); ok {
			return Decided(OutcomeRefused, RuleHardDenyPath, why), true
		}
		if why, ok := DeniedCommand(cfg, op); ok {
			return Decided(OutcomeRefused, RuleHardDenyCommand, why), true
		}
	}
	return Decision{}, false
}

// DeniedPath says why op, whose paths are paths, touches a path that is never allowed: inside a
// .git directory (in any spelling) or under a hard-deny path.
func DeniedPath(cfg PolicyConfig, op patch.Operation, paths []string) (Because, bool) {
	if op.HasFlag(patch.FlagGitInternals) {
		return because(CodeDenyGitInternals, op.Index+1, opName(op)), true
	}
	for _, p := range paths {
		if patch.TouchesGitDir(p) {
			return because(CodeDenyGitDir, op.Index+1, opName(op), p), true
		}
		for _, deny := range cfg.HardDenyPaths {
			if pathUnderAnyDepth(p, deny) {
				return because(CodeDenyPath, op.Index+1, opName(op), p, deny), true
			}
		}
	}
	return Because{}, false
}

// DeniedCommand says which hard-deny pattern a shell operation matches.
func DeniedCommand(cfg PolicyConfig, op patch.Operation) (Because, bool) {
	if op.Type != patch.TypeShell {
		return Because{}, false
	}
	for _, re := range cfg.HardDenyCommands {
		if re.MatchString(op.Target + " " + op.Content) {
			return because(CodeDenyCommand, op.Index+1, strconv.Quote(re.String())), true
		}
	}
	return Because{}, false
}

// opName names an operation's type and action ("file_edit update").
func opName(op patch.Operation) string { return string(op.Type) + " " + op.Action }

// HardRequireHits lists every hard-require hit in operation order, then the patch-wide ones.
func HardRequireHits(cfg PolicyConfig, in PolicyInput) []Hit {
	var hits []Hit
	for _, op := range in.Patch.Operations {
		for _, f := range hardRequireFlags {
			if op.HasFlag(f) {
				detail, finding := hitFinding(op, f)
				args := []any{detail}
				if finding.Code != "" {
					// What the shell analyzer found, also as its code: said in the reader's language.
					args = append(args, finding.Code)
					for _, a := range finding.Args {
						args = append(args, a)
					}
				}
				hits = append(hits, NewHit(RuleHardRequire+string(f), op.Index, detail, requireCodes[f], args...))
			}
		}
	}
	if in.Patch.HasFlag(patch.FlagBroadOverwrite) {
		n := in.Patch.Stats.Files
		hits = append(hits, NewHit(RuleHardRequire+string(patch.FlagBroadOverwrite), -1, fmt.Sprintf("%d files written", n), CodeRequireBroadOverwrite, n))
	}
	if CostOverLimit(cfg, in.Cost) {
		hits = append(hits, CostHit(cfg, in.Cost))
	}
	if in.ProposalUsesBrowser && !in.Patch.HasFlag(patch.FlagBrowser) {
		hits = append(hits, NewHit(RuleProposalBrowser, -1, "the proposal declares browser use", CodeRequireBrowserDeclared))
	}
	if n := len(in.Patch.Unknown); n > 0 {
		hits = append(hits, NewHit(RuleUnknownBlocks, -1, fmt.Sprintf("%d blocks not understood", n), CodeRequireUnknownBlocks, n))
	}
	return hits
}

// requireCodes are the texts of the hard-require flags' hits.
var requireCodes = map[patch.Flag]string{
	patch.FlagDelete: CodeRequireDelete, patch.FlagRename: CodeRequireRename, patch.FlagSendSensitive: CodeRequireSendSensitive,
	patch.FlagPushPublic: CodeRequirePushPublic, patch.FlagForcePush: CodeRequireForcePush, patch.FlagNetwork: CodeRequireNetwork,
	patch.FlagExecuteScript: CodeRequireExecuteScript, patch.FlagBrowser: CodeRequireBrowser, patch.FlagRemoteCode: CodeRequireRemoteCode,
	patch.FlagPrivilege: CodeRequirePrivilege, patch.FlagPermission: CodeRequirePermission,
	patch.FlagOutsideWorkspace: CodeRequireOutsideWorkspace, patch.FlagBackground: CodeRequireBackground,
	patch.FlagDynamicCommand: CodeRequireDynamicCommand, patch.FlagShellUnparsed: CodeRequireShellUnparsed,
}

// CostHit is the hit of an estimate over the limits.
func CostHit(cfg PolicyConfig, c CostHint) Hit {
	return NewHit(RuleCostOverLimit, -1, CostDetail(cfg, c), CodeRequireCostOverLimit, fmt.Sprintf("%.2f", c.EstimatedCostUSD),
		c.EstimatedTokens, fmt.Sprintf("%.2f", cfg.CostLimitUSD), cfg.TokenLimit)
}

// CostOverLimit reports whether the estimate exceeds a configured limit.
func CostOverLimit(cfg PolicyConfig, c CostHint) bool {
	return (cfg.CostLimitUSD > 0 && c.EstimatedCostUSD > cfg.CostLimitUSD) || (cfg.TokenLimit > 0 && c.EstimatedTokens > cfg.TokenLimit)
}

// CostDetail states the estimate against the limits.
func CostDetail(cfg PolicyConfig, c CostHint) string {
	return fmt.Sprintf("estimate $%.2f / %d tokens, limit $%.2f / %d tokens", c.EstimatedCostUSD, c.EstimatedTokens, cfg.CostLimitUSD, cfg.TokenLimit)
}

// PendingFor is the decision of a job that needs a person; the first hit decides. Its reason
// says the hit: a built-in requirement in the reader's language, an operator's rule by its name
// and its own words.
func PendingFor(hits []Hit) Decision {
	first := hits[0]
	why := Because{Code: first.Code, Args: first.Args}
	if first.Code == "" {
		why = because(CodeNeedsPerson, first.Rule, first.Detail)
	}
	return Decision{Outcome: OutcomePending, Rule: first.Rule, Hits: hits, ReasonCode: why.Code, ReasonArgs: why.Args,
		Reason: fmt.Sprintf("needs a person: %s (%s)", first.Rule, first.Detail)}
}

// GrantDecision is the Auto-Approve step: auto-approved within an active grant's scope,
// otherwise pending with the scope rule that stopped it.
func GrantDecision(in PolicyInput, grant *Grant, now time.Time) Decision {
	if grant == nil || !grant.ActiveAt(now) {
		return Decided(OutcomePending, RuleAskNoGrant, because(CodeAskNoGrant))
	}
	if rule, why := grant.Covers(in); rule != "" {
		return Decided(OutcomePending, rule, why)
	}
	d := Decided(OutcomeAutoApproved, RuleAutoApprove, because(CodeWithinGrant, grant.ID, grant.ExpiresAt.UTC().Format(time.RFC3339)))
	d.GrantID = grant.ID
	return d
}

// HitDetail says what in the operation raised f: the exact push command, the shell command
// the analyzer pointed at, or the operation itself.
func HitDetail(op patch.Operation, f patch.Flag) string {
	detail, _ := hitFinding(op, f)
	return detail
}

// hitFinding is HitDetail and, for a shell command, the analyzer's finding it came from.
func hitFinding(op patch.Operation, f patch.Flag) (string, patch.ShellFinding) {
	switch op.Type {
	case patch.TypeGit:
		if push, err := patch.PushOf(op); err == nil {
			return push.Command(), patch.ShellFinding{}
		}
	case patch.TypeShell:
		if x, ok := patch.AnalyzeShell(patch.ShellScript(op)).Finding(f); ok && x.Detail != "" {
			return x.Detail, x
		}
	}
	return fmt.Sprintf("%s %s %s", op.Type, op.Action, op.Target), patch.ShellFinding{}
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
func (g *Grant) Covers(in PolicyInput) (rule string, why Because) {
	if len(g.TaskTypes) > 0 && !slices.Contains(g.TaskTypes, in.TaskType) {
		return RuleScopeTaskType, because(CodeScopeTaskType, strconv.Quote(in.TaskType), strings.Join(g.TaskTypes, ", "))
	}
	if len(g.Routes) > 0 && !slices.Contains(g.Routes, in.Route) {
		return RuleScopeRoute, because(CodeScopeRoute, strconv.Quote(in.Route), strings.Join(g.Routes, ", "))
	}
	for _, op := range in.Patch.Operations {
		n := op.Index + 1
		if len(g.OperationKinds) > 0 && !slices.Contains(g.OperationKinds, string(op.Type)+"."+op.Action) {
			return RuleScopeOperationKind, because(CodeScopeOperationKind, n, string(op.Type)+"."+op.Action, strings.Join(g.OperationKinds, ", "))
		}
		for _, d := range g.DeniedOperations {
			if d == string(op.Type) || d == op.Action || d == string(op.Type)+"."+op.Action || op.HasFlag(patch.Flag(d)) {
				return RuleScopeDeniedOperation, because(CodeScopeDeniedOperation, n, opName(op), d)
			}
		}
		if op.Type == patch.TypeShell {
			if !slices.Contains(g.AllowedOperations, OpsShell) {
				return RuleScopeOperation, because(CodeScopeShellNotNamed, n)
			}
			if len(g.PathPrefixes) == 0 {
				return RuleScopeOperation, because(CodeScopeShellNoPaths, n)
			}
			auto := patch.AnalyzeShellAutomation(patch.ShellScript(op))
			if !auto.OK {
				args := []any{n, auto.Reason}
				if auto.ReasonCode != "" {
					// Why, also as the analyzer's code: said in the reader's language.
					args = append(args, auto.ReasonCode)
					for _, a := range auto.ReasonArgs {
						args = append(args, a)
					}
				}
				return RuleScopeShellCommand, because(CodeScopeShellCommand, args...)
			}
			for _, w := range auto.Writes {
				p, ok := workspaceRelative(w)
				if !ok {
					return RuleScopePath, because(CodeScopeWritesOutside, n, w)
				}
				if !g.coversPath(p) {
					return RuleScopePath, because(CodeScopeWritesElsewhere, n, p, strings.Join(g.PathPrefixes, ", "))
				}
			}
			continue
		}
		if len(g.PathPrefixes) == 0 {
			continue
		}
		paths := patch.OperationPaths(op)
		if len(paths) == 0 && !(op.Type == patch.TypeGit && op.Action == patch.ActionGitCommit) {
			return RuleScopePath, because(CodeScopeNoPath, n, opName(op))
		}
		for _, p := range paths {
			if !g.coversPath(p) {
				return RuleScopePath, because(CodeScopePathElsewhere, n, p, strings.Join(g.PathPrefixes, ", "))
			}
		}
	}
	return "", Because{}
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
