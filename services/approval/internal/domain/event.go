package domain

import (
	"encoding/json"
	"fmt"
	"time"
)

// EventType names an audit event (SPEC §6).
type EventType string

const (
	EventRequested           EventType = "requested"
	EventAutoApproved        EventType = "auto_approved"
	EventRefused             EventType = "refused"
	EventGranted             EventType = "granted"
	EventDenied              EventType = "denied"
	EventExpired             EventType = "expired"
	EventCancelled           EventType = "cancelled"
	EventDecisionRejected    EventType = "decision_rejected"
	EventClaimed             EventType = "claimed"
	EventClaimRejected       EventType = "claim_rejected"
	EventAutoApprovalRevoked EventType = "auto_approval_revoked"
	EventExecutionStarted    EventType = "execution_started"
	EventExecutionCompleted  EventType = "execution_completed"
	EventExecutionFailed     EventType = "execution_failed"
	EventExecutionRefused    EventType = "execution_refused"
	EventHashMismatch        EventType = "hash_mismatch"
	EventAutoApproveEnabled  EventType = "auto_approve_enabled"
	EventAutoApproveDisabled EventType = "auto_approve_disabled"
	EventAccessRefused       EventType = "access_refused"
	// EventAnswered records a proposal that was an answer without a patch: completed without
	// execution.
	EventAnswered EventType = "answered"
)

// The events of a claim as a lease (see Job.Claim).
const (
	// EventClaimRenewed extends the holder's lease; EventClaimLapsed records a lease that ran
	// out (its holder stopped) when another executor takes the job over.
	EventClaimRenewed EventType = "claim_renewed"
	EventClaimLapsed  EventType = "claim_lapsed"
	// EventReportRejected records a report or renewal from an executor that does not hold the
	// claim; the job does not change.
	EventReportRejected EventType = "report_rejected"
)

// Streams that are not jobs share the events table under reserved ids (job ids never start
// with an underscore).
const (
	StreamAutoApprove = "_auto_approve"
	StreamAccess      = "_access"
)

// Draft is an event before the store numbers and chains it.
type Draft struct {
	Type       EventType
	Actor      Actor
	Channel    string
	Payload    any
	PolicyRule string
	At         time.Time
}

// Event is one sealed audit log row.
type Event struct {
	JobID      string          `json:"job_id"`
	Seq        int64           `json:"seq"`
	Type       EventType       `json:"type"`
	Actor      Actor           `json:"actor"`
	Channel    string          `json:"channel,omitempty"`
	Payload    json.RawMessage `json:"payload"`
	PolicyRule string          `json:"policy_rule,omitempty"`
	PrevHash   string          `json:"prev_hash"`
	Hash       string          `json:"hash"`
	// KeyID names the audit key whose HMAC Hash is; empty on events written before the chain
	// was keyed.
	KeyID string    `json:"key_id,omitempty"`
	At    time.Time `json:"created_at"`
	// Legacy is set by the store on events written before the chain was keyed (they may carry
	// the old unkeyed sha256; any later event must be keyed).
	Legacy bool `json:"-"`
}

// Normalize brings a time to what both databases store exactly (UTC, microseconds), so a
// rebuilt job equals its read model and hashes verify after a round trip.
func Normalize(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// Payloads of the events that carry more than the actor.
type (
	AutoApprovedPayload struct {
		GrantID string `json:"grant_id"`
		Reason  string `json:"reason"`
		// ReasonCode and ReasonArgs are the reason as a code of Texts (see Decision).
		ReasonCode string   `json:"reason_code,omitempty"`
		ReasonArgs []string `json:"reason_args,omitempty"`
		// PolicyHash names the policy file that decided.
		PolicyHash string `json:"policy_hash,omitempty"`
	}
	// ReasonPayload is a person's reason (denied, cancelled: their words, never a code) or the
	// policy's (refused, auto_approval_revoked: the English text and, since reasons have codes,
	// the code of Texts with its arguments; older events have the text only).
	ReasonPayload struct {
		Reason     string   `json:"reason,omitempty"`
		ReasonCode string   `json:"reason_code,omitempty"`
		ReasonArgs []string `json:"reason_args,omitempty"`
		// PolicyHash names the policy file of a refusal by policy.
		PolicyHash string `json:"policy_hash,omitempty"`
		// DecidedIn is the chat session a person denied or cancelled from.
		DecidedIn string `json:"decided_in,omitempty"`
	}
	// DecisionPayload is a grant's: the chat session the approver answered from.
	DecisionPayload struct {
		DecidedIn string `json:"decided_in,omitempty"`
	}
	RejectedPayload struct {
		Attempt string `json:"attempt"`
		Status  Status `json:"status,omitempty"`
		Reason  string `json:"reason"`
	}
	ExecutorPayload struct {
		ExecutorID string `json:"executor_id,omitempty"`
		// LeaseUntil is when the claim lapses unless renewed (claimed, claim_renewed).
		LeaseUntil time.Time `json:"lease_until,omitzero"`
	}
	// LapsedPayload names the claim that lapsed: its holder, its token and its lease's end.
	LapsedPayload struct {
		ExecutorID string    `json:"executor_id"`
		Token      int64     `json:"token"`
		LeaseUntil time.Time `json:"lease_until,omitzero"`
	}
	ExecutionPayload struct {
		ExecutorID string          `json:"executor_id,omitempty"`
		Result     json.RawMessage `json:"result,omitempty"`
		Detail     string          `json:"detail,omitempty"`
	}
	HashMismatchPayload struct {
		Source   string `json:"source"`
		Expected string `json:"expected"`
		Actual   string `json:"actual,omitempty"`
		Detail   string `json:"detail,omitempty"`
	}
)

// Apply folds one event into the job. It is the only place state changes, so a job rebuilt
// from its events equals the read model.
func (j *Job) Apply(e Event) error {
	decode := func(dst any) error {
		if err := json.Unmarshal(e.Payload, dst); err != nil {
			return fmt.Errorf("event %d (%s) of %s: %w", e.Seq, e.Type, e.JobID, err)
		}
		return nil
	}
	switch e.Type {
	case EventRequested:
		var req Job
		if err := decode(&req); err != nil {
			return err
		}
		*j = req
		j.ID = e.JobID
		j.Status = StatusPending
		j.RequestedBy = e.Actor
		j.RequestedAt = e.At
		j.PolicyRule = e.PolicyRule
	case EventAutoApproved:
		var p AutoApprovedPayload
		if err := decode(&p); err != nil {
			return err
		}
		j.Status, j.AutoApproved, j.GrantID = StatusAutoApproved, true, p.GrantID
		j.PolicyRule, j.PolicyReason, j.PolicyReasonCode, j.PolicyReasonArgs = e.PolicyRule, p.Reason, p.ReasonCode, p.ReasonArgs
		if p.PolicyHash != "" {
			j.PolicyHash = p.PolicyHash
		}
		j.DecidedBy, j.DecidedAt = e.Actor, e.At
	case EventRefused:
		var p ReasonPayload
		if err := decode(&p); err != nil {
			return err
		}
		j.Status, j.PolicyRule, j.PolicyReason = StatusRefused, e.PolicyRule, p.Reason
		j.PolicyReasonCode, j.PolicyReasonArgs = p.ReasonCode, p.ReasonArgs
		if p.PolicyHash != "" {
			j.PolicyHash = p.PolicyHash
		}
		j.DecidedBy, j.DecidedAt = e.Actor, e.At
	case EventGranted:
		var p DecisionPayload
		if err := decode(&p); err != nil {
			return err
		}
		j.Status, j.DecidedBy, j.DecidedAt, j.DecidedIn = StatusGranted, e.Actor, e.At, p.DecidedIn
		j.PolicyRule = e.PolicyRule
	case EventDenied:
		var p ReasonPayload
		if err := decode(&p); err != nil {
			return err
		}
		j.Status, j.DecidedBy, j.DecidedAt, j.DenyReason, j.DecidedIn = StatusDenied, e.Actor, e.At, p.Reason, p.DecidedIn
		j.PolicyRule = e.PolicyRule
	case EventExpired:
		j.Status, j.DecidedAt, j.PolicyRule = StatusExpired, e.At, e.PolicyRule
	case EventCancelled:
		var p ReasonPayload
		if err := decode(&p); err != nil {
			return err
		}
		j.Status, j.DecidedBy, j.DecidedAt, j.DenyReason, j.DecidedIn = StatusCancelled, e.Actor, e.At, p.Reason, p.DecidedIn
	case EventAutoApprovalRevoked:
		var p ReasonPayload
		if err := decode(&p); err != nil {
			return err
		}
		j.Status, j.AutoApproved, j.GrantID = StatusPending, false, ""
		j.PolicyRule, j.PolicyReason, j.PolicyReasonCode, j.PolicyReasonArgs = e.PolicyRule, p.Reason, p.ReasonCode, p.ReasonArgs
		j.DecidedBy, j.DecidedAt, j.DecidedIn = Actor{}, time.Time{}, ""
	case EventClaimed:
		var p ExecutorPayload
		if err := decode(&p); err != nil {
			return err
		}
		if j.Status != StatusExecuting {
			j.ExecutedAt = e.At // a takeover continues the execution that started then
		}
		j.Status, j.ClaimedBy, j.ClaimToken, j.LeaseExpiresAt = StatusExecuting, p.ExecutorID, e.Seq, p.LeaseUntil
	case EventClaimRenewed:
		var p ExecutorPayload
		if err := decode(&p); err != nil {
			return err
		}
		j.LeaseExpiresAt = p.LeaseUntil
	case EventClaimLapsed:
		j.ClaimedBy, j.ClaimToken, j.LeaseExpiresAt = "", 0, time.Time{}
	case EventExecutionCompleted, EventExecutionFailed, EventExecutionRefused:
		var p ExecutionPayload
		if err := decode(&p); err != nil {
			return err
		}
		j.Status = StatusFailed
		if e.Type == EventExecutionCompleted {
			j.Status = StatusCompleted
		}
		j.Result, j.FinishedAt = p.Result, e.At
		// Failed by the service, not reported by an executor: an interrupted execution it would
		// not let another executor finish (see Claim).
		j.Interrupted = e.Type == EventExecutionFailed && e.Actor == System
	case EventHashMismatch:
		j.Status, j.FinishedAt, j.PolicyRule = StatusFailed, e.At, e.PolicyRule
	case EventAnswered:
		j.Status, j.FinishedAt = StatusAnswered, e.At
	case EventDecisionRejected, EventClaimRejected, EventExecutionStarted, EventAccessRefused, EventReportRejected:
		// Recorded for the audit trail; the state does not change.
	default:
		return fmt.Errorf("event %d of %s: unknown type %q", e.Seq, e.JobID, e.Type)
	}
	j.Version, j.LastHash = e.Seq, e.Hash
	return nil
}

// Rebuild folds a job's events from nothing.
func Rebuild(events []Event) (Job, error) {
	var j Job
	for _, e := range events {
		if err := j.Apply(e); err != nil {
			return Job{}, err
		}
	}
	if j.Version == 0 {
		return Job{}, ErrNotFound
	}
	return j, nil
}
