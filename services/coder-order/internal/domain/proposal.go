package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

// Risk is the coder's own risk assessment (approval recomputes its own flags).
type Risk struct {
	Level               string   `json:"level"`
	Destructive         bool     `json:"destructive"`
	CompatibilityIssues []string `json:"compatibility_issues"`
	RollbackPossible    bool     `json:"rollback_possible"`
	Notes               string   `json:"notes"`
}

// CostHint is the cost estimate attached to a proposal.
type CostHint struct {
	EstimatedTokens  int64   `json:"estimated_tokens"`
	EstimatedCostUSD float64 `json:"estimated_cost_usd"`
	NearLimit        bool    `json:"near_limit"`
}

// Usage is the token usage of producing a proposal (all attempts).
type Usage struct {
	InputTokens  int64
	OutputTokens int64
}

// Proposal is the coder output contract of SPEC §6 plus who produced it.
type Proposal struct {
	JobID        string   `json:"job_id"`
	Plan         string   `json:"plan"`
	Patch        string   `json:"patch"`
	Risk         Risk     `json:"risk"`
	CostHint     CostHint `json:"cost_hint"`
	NeedApproval bool     `json:"need_approval"`
	UsesBrowser  bool     `json:"uses_browser"`
	TaskType     string   `json:"task_type"`
	// Artifacts and Constraints are what the proposal produces or relies on and the
	// constraints it respects (seed 003 §8-1), as the order wrote them.
	Artifacts   []string `json:"artifacts"`
	Constraints []string `json:"constraints"`
	// Base maps each touched file to the sha256 of the content the patch was written against
	// (patch.BaseAbsent for a new file).
	Base map[string]string `json:"base"`

	Order     string `json:"-"`
	Provider  string `json:"-"`
	Model     string `json:"-"`
	Usage     Usage  `json:"-"`
	LatencyMS int64  `json:"-"`
	// Repaired is true when the first answer was invalid and the repair answer was used.
	Repaired bool `json:"-"`
}

// Task types and risk levels of the contract.
var (
	TaskTypes  = []string{"design", "codegen", "review", "refactor", "ops", "docs"}
	RiskLevels = []string{"low", "medium", "high"}
)

// ContractJSON describes the answer shape; it is part of every prompt (and the offline
// provider recognises the proposal contract from "cost_hint" in it).
const ContractJSON = `{
  "job_id": "<the job id given>",
  "plan": "<what will be done and why, a few lines>",
  "patch": "<the change: a JSON array of commands {type, action, target, content, metadata}, or Markdown fences ` + "```lang:path" + `, or a unified diff; empty only when nothing is to be changed>",
  "risk": {"level": "low|medium|high", "destructive": false, "compatibility_issues": [], "rollback_possible": true, "notes": ""},
  "cost_hint": {"estimated_tokens": 0, "estimated_cost_usd": 0, "near_limit": false},
  "need_approval": true,
  "uses_browser": false,
  "task_type": "design|codegen|review|refactor|ops|docs",
  "artifacts": ["<files or results the change produces>"],
  "constraints": ["<constraints the change respects>"],
  "base": {"<each file the patch changes>": "<the sha256 shown with its content, or \"none\" for a new file>"}
}`

// PatchCheck validates patch text; ParsePatch is the production check.
type PatchCheck func(text string) (*patch.Patch, error)

// ParsePatch checks a patch with the shared parser used by approval and the executor.
func ParsePatch(text string) (*patch.Patch, error) {
	return patch.Parse(text, patch.Options{})
}

// ParseProposal decodes a model answer and checks it against the contract. It returns every
// problem found (each naming the field), so one repair request can fix them all. The answer
// may be wrapped in a code fence or prose; the outermost JSON object is used.
func ParseProposal(answer string, check PatchCheck) (*Proposal, []string) {
	obj, err := extractObject(answer)
	if err != nil {
		return nil, []string{"answer: " + err.Error()}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(obj, &fields); err != nil {
		return nil, []string{"answer: not a JSON object: " + err.Error()}
	}
	var p Proposal
	var problems []string
	add := func(msg string) { problems = append(problems, msg) }

	optString(fields, "job_id", &p.JobID, add)
	if reqString(fields, "plan", &p.Plan, add) && strings.TrimSpace(p.Plan) == "" {
		add("plan: must not be empty")
	}
	if raw, ok := fields["patch"]; !ok {
		add("missing field patch")
	} else {
		switch firstByte(raw) {
		case '"':
			_ = json.Unmarshal(raw, &p.Patch)
		case '[':
			// Models often inline the JSON command array; it is the same patch format.
			p.Patch = string(raw)
		default:
			add(fmt.Sprintf("patch: must be a string (or a JSON array of commands), got %s", kind(raw)))
		}
	}
	if raw, ok := fields["risk"]; !ok {
		add("missing field risk")
	} else if firstByte(raw) != '{' {
		add(fmt.Sprintf("risk: must be an object, got %s", kind(raw)))
	} else {
		var rf map[string]json.RawMessage
		_ = json.Unmarshal(raw, &rf)
		if reqString(rf, "level", &p.Risk.Level, prefixed(add, "risk.")) && !slices.Contains(RiskLevels, p.Risk.Level) {
			add(fmt.Sprintf("risk.level: must be low, medium or high, got %q", p.Risk.Level))
		}
		reqBool(rf, "destructive", &p.Risk.Destructive, prefixed(add, "risk."))
		reqBool(rf, "rollback_possible", &p.Risk.RollbackPossible, prefixed(add, "risk."))
		optString(rf, "notes", &p.Risk.Notes, prefixed(add, "risk."))
		if raw, ok := rf["compatibility_issues"]; ok && !isNull(raw) {
			if err := json.Unmarshal(raw, &p.Risk.CompatibilityIssues); err != nil {
				add(fmt.Sprintf("risk.compatibility_issues: must be a list of strings, got %s", kind(raw)))
			}
		}
	}
	if raw, ok := fields["cost_hint"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &p.CostHint); err != nil {
			add(fmt.Sprintf("cost_hint: must be an object {estimated_tokens, estimated_cost_usd, near_limit}, got %s", kind(raw)))
		}
	}
	reqBool(fields, "need_approval", &p.NeedApproval, add)
	reqBool(fields, "uses_browser", &p.UsesBrowser, add)
	if reqString(fields, "task_type", &p.TaskType, add) && !slices.Contains(TaskTypes, p.TaskType) {
		add(fmt.Sprintf("task_type: must be one of %s, got %q", strings.Join(TaskTypes, ", "), p.TaskType))
	}
	optStrings(fields, "artifacts", &p.Artifacts, add)
	optStrings(fields, "constraints", &p.Constraints, add)
	if raw, ok := fields["base"]; ok && !isNull(raw) {
		if firstByte(raw) != '{' || json.Unmarshal(raw, &p.Base) != nil {
			add(fmt.Sprintf("base: must be an object of path to sha256, got %s", kind(raw)))
		} else {
			for k, v := range p.Base {
				if !patch.ValidBase(v) {
					add(fmt.Sprintf("base.%s: must be a lower-case hex sha256 or %q, got %q", k, patch.BaseAbsent, v))
				}
			}
		}
	}
	if p.Patch != "" && check != nil {
		parsed, err := check(p.Patch)
		switch {
		case err != nil:
			add(fmt.Sprintf("patch: rejected by the patch parser: %v", err))
		case len(parsed.Unknown) > 0:
			add(fmt.Sprintf("patch: blocks that are not operations: %s", strings.Join(parsed.Unknown, "; ")))
		default:
			// The patch decides, not the flag: a browser command makes a browser job.
			if slices.Contains(parsed.Flags, patch.FlagBrowser) {
				p.UsesBrowser = true
			}
		}
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		return nil, problems
	}
	return &p, nil
}

// extractObject returns the outermost {...} of s (after stripping a code fence).
func extractObject(s string) ([]byte, error) {
	i := strings.IndexByte(s, '{')
	j := strings.LastIndexByte(s, '}')
	if i < 0 || j < i {
		return nil, fmt.Errorf("no JSON object in the answer")
	}
	b := []byte(s[i : j+1])
	if !json.Valid(b) {
		return nil, fmt.Errorf("the JSON object is not valid JSON")
	}
	return b, nil
}

func firstByte(raw json.RawMessage) byte {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return 0
	}
	return t[0]
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func kind(raw json.RawMessage) string {
	switch firstByte(raw) {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

type addFunc func(msg string)

func prefixed(add addFunc, prefix string) addFunc {
	return func(msg string) {
		if rest, ok := strings.CutPrefix(msg, "missing field "); ok {
			add("missing field " + prefix + rest)
			return
		}
		add(prefix + msg)
	}
}

func reqString(f map[string]json.RawMessage, key string, dst *string, add addFunc) bool {
	raw, ok := f[key]
	if !ok {
		add("missing field " + key)
		return false
	}
	if firstByte(raw) != '"' {
		add(fmt.Sprintf("%s: must be a string, got %s", key, kind(raw)))
		return false
	}
	return json.Unmarshal(raw, dst) == nil
}

func optString(f map[string]json.RawMessage, key string, dst *string, add addFunc) {
	raw, ok := f[key]
	if !ok || isNull(raw) {
		return
	}
	if firstByte(raw) != '"' {
		add(fmt.Sprintf("%s: must be a string, got %s", key, kind(raw)))
		return
	}
	_ = json.Unmarshal(raw, dst)
}

func optStrings(f map[string]json.RawMessage, key string, dst *[]string, add addFunc) {
	raw, ok := f[key]
	if !ok || isNull(raw) {
		return
	}
	if firstByte(raw) != '[' || json.Unmarshal(raw, dst) != nil {
		add(fmt.Sprintf("%s: must be a list of strings, got %s", key, kind(raw)))
	}
}

func reqBool(f map[string]json.RawMessage, key string, dst *bool, add addFunc) {
	raw, ok := f[key]
	if !ok {
		add("missing field " + key)
		return
	}
	if b := firstByte(raw); b != 't' && b != 'f' {
		add(fmt.Sprintf("%s: must be true or false, got %s", key, kind(raw)))
		return
	}
	_ = json.Unmarshal(raw, dst)
}
