package domain

import (
	"encoding/json"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

// Status is a job's state (SPEC §6).
type Status string

const (
	StatusPending      Status = "pending"
	StatusGranted      Status = "granted"
	StatusAutoApproved Status = "auto_approved"
	StatusDenied       Status = "denied"
	StatusExpired      Status = "expired"
	StatusCancelled    Status = "cancelled"
	StatusExecuting    Status = "executing"
	StatusCompleted    Status = "completed"
	StatusFailed       Status = "failed"
	StatusRefused      Status = "refused"
	// StatusAnswered: completed without execution — the proposal was an answer with no patch.
	StatusAnswered Status = "answered"
)

// allStatuses lists every status.
var allStatuses = []Status{StatusPending, StatusGranted, StatusAutoApproved, StatusDenied, StatusExpired,
	StatusCancelled, StatusExecuting, StatusCompleted, StatusFailed, StatusRefused, StatusAnswered}

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	for _, x := range allStatuses {
		if x == s {
			return true
		}
	}
	return false
}

// Claimable: approved for exactly this content and not yet claimed.
func (s Status) Claimable() bool { return s == StatusGranted || s == StatusAutoApproved }

// LeaseLapsed reports whether an executing job's claim ran out at now: its holder stopped
// renewing it. A claim recorded before claims were leases has no lease and never lapses by
// itself: nothing tells how far its executor got (no journal of it), so it is left to a person
// rather than run again.
func (j Job) LeaseLapsed(now time.Time) bool {
	return j.Status == StatusExecuting && !j.LeaseExpiresAt.IsZero() && !now.Before(j.LeaseExpiresAt)
}

// Actor is whoever caused an event.
type Actor struct {
	ID          string `json:"id,omitempty"`
	Channel     string `json:"channel,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
}

// Risk is the coder's own assessment, kept for display; policy never relies on it alone.
type Risk struct {
	Level               string   `json:"level,omitempty"`
	Destructive         bool     `json:"destructive,omitempty"`
	CompatibilityIssues []string `json:"compatibility_issues,omitempty"`
	RollbackPossible    bool     `json:"rollback_possible,omitempty"`
	Notes               string   `json:"notes,omitempty"`
}

// CostHint is the proposal's cost estimate.
type CostHint struct {
	EstimatedTokens  int64   `json:"estimated_tokens,omitempty"`
	EstimatedCostUSD float64 `json:"estimated_cost_usd,omitempty"`
	NearLimit        bool    `json:"near_limit,omitempty"`
}

// Job is the approval job aggregate. Its state is the fold of its events (Apply); the stores
// keep a read model of it updated in the same transaction as the events.
type Job struct {
	ID        string `json:"job_id"`
	Status    Status `json:"status"`
	SessionID string `json:"session_id,omitempty"`
	Channel   string `json:"channel,omitempty"`
	Route     string `json:"route,omitempty"`
	TaskType  string `json:"task_type,omitempty"`
	Order     string `json:"order,omitempty"`
	Locale    string `json:"locale,omitempty"`
	Summary   string `json:"summary,omitempty"`
	Plan      string `json:"plan,omitempty"`
	// Patch is the proposal's patch text as received; ContentHash binds it.
	Patch       string   `json:"patch,omitempty"`
	ContentHash string   `json:"content_hash"`
	Risk        Risk     `json:"risk"`
	Cost        CostHint `json:"cost"`
	// UsesBrowser is computed from the patch (or claimed by the proposal).
	UsesBrowser         bool              `json:"uses_browser"`
	ProposalUsesBrowser bool              `json:"proposal_uses_browser,omitempty"`
	Operations          []patch.Operation `json:"operations"`
	AffectedPaths       []string          `json:"affected_paths"`
	Flags               []string          `json:"flags"`
	Stats               patch.DiffStats   `json:"stats"`
	Unknown             []string          `json:"unknown,omitempty"`
	// PolicyRule is the rule that decided the current state; PolicyReason says why, in English.
	// A built-in rule's reason is also a code of Texts with arguments (PolicyReasonCode,
	// PolicyReasonArgs: PolicyReasonIn says it in the reader's language); an operator's rule's
	// reason, and one recorded before reasons had codes, has none and is shown as written.
	PolicyRule       string   `json:"policy_rule,omitempty"`
	PolicyReason     string   `json:"policy_reason,omitempty"`
	PolicyReasonCode string   `json:"policy_reason_code,omitempty"`
	PolicyReasonArgs []string `json:"policy_reason_args,omitempty"`
	// PolicyHash is the sha256 of the policy file that made the request's decision.
	PolicyHash   string `json:"policy_hash,omitempty"`
	AutoApproved bool   `json:"auto_approved"`
	GrantID      string `json:"grant_id,omitempty"`
	RequestedBy  Actor  `json:"requested_by"`
	DecidedBy    Actor  `json:"decided_by"`
	// DecidedIn is the chat session a person decided from ("" for the REST API, the console and
	// the service's own decisions).
	DecidedIn   string    `json:"decided_in,omitempty"`
	DenyReason  string    `json:"deny_reason,omitempty"`
	ClaimedBy   string    `json:"claimed_by,omitempty"`
	RequestedAt time.Time `json:"requested_at"`
	DecidedAt   time.Time `json:"decided_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	ExecutedAt  time.Time `json:"executed_at"`
	FinishedAt  time.Time `json:"finished_at"`
	// Result is the executor's report (protojson of common.v1.ExecutionResult).
	Result json.RawMessage `json:"result,omitempty"`
	// TraceParent is the W3C trace context of the request that created the job; every later
	// action on the job joins that trace.
	TraceParent string `json:"trace_parent,omitempty"`
	// CostConfirmation: the job asks a person whether to continue a coder call whose estimate
	// (Cost) is over the limit. It has no patch, is never auto-approved and never claimed: its
	// grant is the go-ahead for that one call, taken up by the chat that asked.
	CostConfirmation bool `json:"cost_confirmation,omitempty"`
	// ComputedRisk is approval's own risk level of the patch (ComputedRisk: high, medium, low),
	// and RiskRules the rules that require a person for it; Risk stays the coder's claim.
	ComputedRisk string `json:"computed_risk,omitempty"`
	// Interrupted: the job failed because its executor stopped during an auto-approved
	// execution and Auto-Approve was no longer in force to finish it.
	Interrupted bool     `json:"interrupted,omitempty"`
	RiskRules   []string `json:"risk_rules,omitempty"`
	// Version is the number of events recorded; LastHash is the hash of the latest one.
	Version  int64  `json:"version"`
	LastHash string `json:"last_hash,omitempty"`

	// ClaimToken fences the claim of ClaimedBy (the executor replica holding it): the sequence
	// number of the event that gave it the claim. Reports and renewals carry it; a takeover
	// gives the job a new one.
	ClaimToken int64 `json:"claim_token,omitempty"`
	// LeaseExpiresAt is when the claim lapses unless its holder renews it; another executor may
	// then take the job over.
	LeaseExpiresAt time.Time `json:"lease_expires_at"`
}
