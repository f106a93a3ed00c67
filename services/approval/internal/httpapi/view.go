package httpapi

import (
	"encoding/json"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// The REST representation: optional times are omitted instead of zero, lists are never null.

type operationView struct {
	Index         int      `json:"index"`
	Type          string   `json:"type"`
	Action        string   `json:"action"`
	Target        string   `json:"target"`
	ContentSHA256 string   `json:"content_sha256"`
	Metadata      any      `json:"metadata,omitempty"`
	Flags         []string `json:"flags"`
	Source        string   `json:"source"`
}

type statsView struct {
	Files     int `json:"files"`
	Additions int `json:"additions"`
	Deletions int `json:"deletions"`
}

type jobView struct {
	JobID       string        `json:"job_id"`
	Status      domain.Status `json:"status"`
	SessionID   string        `json:"session_id"`
	Channel     string        `json:"channel"`
	Route       string        `json:"route"`
	TaskType    string        `json:"task_type"`
	Order       string        `json:"order"`
	Summary     string        `json:"summary"`
	Plan        string        `json:"plan"`
	Patch       string        `json:"patch"`
	ContentHash string        `json:"content_hash"`
	// ComputedRisk is approval's own assessment and RiskRules the rules that require a person;
	// Risk is what the coder claimed (shown beside it, labelled as such).
	ComputedRisk  string          `json:"computed_risk"`
	RiskRules     []string        `json:"risk_rules"`
	Risk          domain.Risk     `json:"risk"`
	CostConfirm   bool            `json:"cost_confirmation"`
	Cost          domain.CostHint `json:"cost"`
	UsesBrowser   bool            `json:"uses_browser"`
	Operations    []operationView `json:"operations"`
	AffectedPaths []string        `json:"affected_paths"`
	Flags         []string        `json:"flags"`
	Stats         statsView       `json:"stats"`
	Unknown       []string        `json:"unknown"`
	PolicyRule    string          `json:"policy_rule"`
	// PolicyReason is the reason as recorded, in English (or an operator's rule's own words);
	// PolicyReasonText is it said in the locale asked for (?locale=, else the job's), and
	// PolicyReasonCode and PolicyReasonArgs the code of a built-in rule's reason.
	PolicyReason     string          `json:"policy_reason"`
	PolicyReasonText string          `json:"policy_reason_text"`
	PolicyReasonCode string          `json:"policy_reason_code,omitempty"`
	PolicyReasonArgs []string        `json:"policy_reason_args,omitempty"`
	PolicyHash       string          `json:"policy_hash,omitempty"`
	AutoApproved     bool            `json:"auto_approved"`
	RequestedBy      *domain.Actor   `json:"requested_by,omitempty"`
	DecidedBy        *domain.Actor   `json:"decided_by,omitempty"`
	DenyReason       string          `json:"deny_reason,omitempty"`
	ClaimedBy        string          `json:"claimed_by,omitempty"`
	RequestedAt      time.Time       `json:"requested_at"`
	DecidedAt        *time.Time      `json:"decided_at,omitempty"`
	ExpiresAt        *time.Time      `json:"expires_at,omitempty"`
	ExecutedAt       *time.Time      `json:"executed_at,omitempty"`
	FinishedAt       *time.Time      `json:"finished_at,omitempty"`
	Result           json.RawMessage `json:"result,omitempty"`
	Version          int64           `json:"version"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func optActor(a domain.Actor) *domain.Actor {
	if a == (domain.Actor{}) {
		return nil
	}
	return &a
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// viewJob is j as the REST API shows it, its policy reason said in locale ("": the job's).
func viewJob(j domain.Job, locale string) jobView {
	if locale == "" {
		locale = j.Locale
	}
	v := jobView{
		JobID: j.ID, Status: j.Status, SessionID: j.SessionID, Channel: j.Channel, Route: j.Route, TaskType: j.TaskType,
		Order: j.Order, Summary: j.Summary, Plan: j.Plan, Patch: j.Patch, ContentHash: j.ContentHash, Risk: j.Risk, Cost: j.Cost,
		UsesBrowser: j.UsesBrowser, AffectedPaths: nonNil(j.AffectedPaths), Flags: nonNil(j.Flags),
		Stats: statsView{Files: j.Stats.Files, Additions: j.Stats.Additions, Deletions: j.Stats.Deletions}, Unknown: nonNil(j.Unknown),
		PolicyRule: j.PolicyRule, PolicyReason: j.PolicyReason, PolicyReasonText: j.PolicyReasonIn(locale),
		PolicyReasonCode: j.PolicyReasonCode, PolicyReasonArgs: j.PolicyReasonArgs, PolicyHash: j.PolicyHash, AutoApproved: j.AutoApproved, RequestedBy: optActor(j.RequestedBy),
		DecidedBy: optActor(j.DecidedBy), DenyReason: j.DenyReason, ClaimedBy: j.ClaimedBy, RequestedAt: j.RequestedAt,
		DecidedAt: optTime(j.DecidedAt), ExpiresAt: optTime(j.ExpiresAt), ExecutedAt: optTime(j.ExecutedAt),
		FinishedAt: optTime(j.FinishedAt), Result: j.Result, Version: j.Version, Operations: []operationView{},
		ComputedRisk: domain.ComputedRiskOf(j), RiskRules: nonNil(j.RiskRules), CostConfirm: j.CostConfirmation,
	}
	if v.Risk.CompatibilityIssues == nil {
		v.Risk.CompatibilityIssues = []string{}
	}
	for _, op := range j.Operations {
		flags := make([]string, len(op.Flags))
		for i, f := range op.Flags {
			flags[i] = string(f)
		}
		ov := operationView{Index: op.Index, Type: string(op.Type), Action: op.Action, Target: op.Target,
			ContentSHA256: op.ContentSHA256, Flags: flags, Source: op.Source}
		if len(op.Metadata) > 0 {
			ov.Metadata = op.Metadata
		}
		v.Operations = append(v.Operations, ov)
	}
	return v
}

type eventView struct {
	JobID      string          `json:"job_id"`
	Seq        int64           `json:"seq"`
	Type       string          `json:"type"`
	Actor      domain.Actor    `json:"actor"`
	Channel    string          `json:"channel"`
	Payload    json.RawMessage `json:"payload"`
	PolicyRule string          `json:"policy_rule"`
	PrevHash   string          `json:"prev_hash"`
	Hash       string          `json:"hash"`
	CreatedAt  time.Time       `json:"created_at"`
}

func viewEvent(e domain.Event) eventView {
	return eventView{JobID: e.JobID, Seq: e.Seq, Type: string(e.Type), Actor: e.Actor, Channel: e.Channel, Payload: e.Payload,
		PolicyRule: e.PolicyRule, PrevHash: e.PrevHash, Hash: e.Hash, CreatedAt: e.At}
}

type grantView struct {
	ID               string       `json:"id"`
	TaskTypes        []string     `json:"task_types"`
	Routes           []string     `json:"routes"`
	PathPrefixes     []string     `json:"path_prefixes"`
	DeniedOperations []string     `json:"denied_operations"`
	AllowedOps       []string     `json:"allowed_operations"`
	OperationKinds   []string     `json:"operation_kinds"`
	SimilarTo        string       `json:"similar_to,omitempty"`
	CreatedBy        domain.Actor `json:"created_by"`
	Reason           string       `json:"reason"`
	CreatedAt        time.Time    `json:"created_at"`
	ExpiresAt        time.Time    `json:"expires_at"`
	RemainingSeconds int64        `json:"remaining_seconds"`
}

// similarView answers approve-similar: the granted job and the grant made from it.
type similarView struct {
	Job        jobView    `json:"job"`
	Grant      *grantView `json:"grant"`
	StatusText string     `json:"status_text"`
}

type autoApproveView struct {
	Active      bool       `json:"active"`
	Unavailable bool       `json:"unavailable"`
	Grant       *grantView `json:"grant,omitempty"`
	StatusText  string     `json:"status_text"`
	RevokedJobs *int       `json:"revoked_jobs,omitempty"`
}

func viewGrant(g *domain.Grant, now time.Time) *grantView {
	if !g.ActiveAt(now) {
		return nil
	}
	return &grantView{ID: g.ID, TaskTypes: nonNil(g.TaskTypes), Routes: nonNil(g.Routes), PathPrefixes: nonNil(g.PathPrefixes),
		DeniedOperations: nonNil(g.DeniedOperations), AllowedOps: nonNil(g.AllowedOperations),
		OperationKinds: nonNil(g.OperationKinds), SimilarTo: g.SimilarTo, CreatedBy: g.CreatedBy, Reason: g.Reason, CreatedAt: g.CreatedAt,
		ExpiresAt: g.ExpiresAt, RemainingSeconds: int64(g.ExpiresAt.Sub(now).Seconds())}
}
