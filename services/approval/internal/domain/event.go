package domain

import (
	"crypto/sha256"
	"encoding/hex"
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
	At         time.Time       `json:"created_at"`
}

// Normalize brings a time to what both databases store exactly (UTC, microseconds), so a
// rebuilt job equals its read model and hashes verify after a round trip.
func Normalize(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// Seal numbers and chains a draft after the stream's last event (seq prevSeq, hash prevHash).
func Seal(stream string, prevSeq int64, prevHash string, d Draft) (Event, error) {
	payload := d.Payload
	if payload == nil {
		payload = struct{}{}
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return Event{}, fmt.Errorf("encode %s payload: %w", d.Type, err)
	}
	e := Event{
		JobID: stream, Seq: prevSeq + 1, Type: d.Type, Actor: d.Actor, Channel: d.Channel,
		Payload: b, PolicyRule: d.PolicyRule, PrevHash: prevHash, At: Normalize(d.At),
	}
	e.Hash = e.ComputeHash()
	return e, nil
}

// ComputeHash is sha256 over the event's fields and the previous hash, encoded as a JSON array
// so no two different events share an encoding.
func (e Event) ComputeHash() string {
	fields := []any{e.JobID, e.Seq, string(e.Type), e.Actor.ID, e.Actor.Channel, e.Actor.DisplayName,
		e.Channel, string(e.Payload), e.PolicyRule, e.At.UTC().Format(time.RFC3339Nano), e.PrevHash}
	b, _ := json.Marshal(fields)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// VerifyChain checks that events are numbered 1..n, each hash is right, and each prev_hash is
// the hash before it. It returns the first problem found.
func VerifyChain(events []Event) error {
	prev := ""
	for i, e := range events {
		if e.Seq != int64(i+1) {
			return fmt.Errorf("event %d of %s has seq %d", i+1, e.JobID, e.Seq)
		}
		if e.PrevHash != prev {
			return fmt.Errorf("event %d of %s: prev_hash does not match the previous event", e.Seq, e.JobID)
		}
		if e.ComputeHash() != e.Hash {
			return fmt.Errorf("event %d of %s: hash does not match its content", e.Seq, e.JobID)
		}
		prev = e.Hash
	}
	return nil
}

// Payloads of the events that carry more than the actor.
type (
	AutoApprovedPayload struct {
		GrantID string `json:"grant_id"`
		Reason  string `json:"reason"`
	}
	ReasonPayload struct {
		Reason string `json:"reason,omitempty"`
	}
	RejectedPayload struct {
		Attempt string `json:"attempt"`
		Status  Status `json:"status,omitempty"`
		Reason  string `json:"reason"`
	}
	ExecutorPayload struct {
		ExecutorID string `json:"executor_id,omitempty"`
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
		j.PolicyRule, j.PolicyReason = e.PolicyRule, p.Reason
		j.DecidedBy, j.DecidedAt = e.Actor, e.At
	case EventRefused:
		var p ReasonPayload
		if err := decode(&p); err != nil {
			return err
		}
		j.Status, j.PolicyRule, j.PolicyReason = StatusRefused, e.PolicyRule, p.Reason
		j.DecidedBy, j.DecidedAt = e.Actor, e.At
	case EventGranted:
		j.Status, j.DecidedBy, j.DecidedAt = StatusGranted, e.Actor, e.At
		j.PolicyRule = e.PolicyRule
	case EventDenied:
		var p ReasonPayload
		if err := decode(&p); err != nil {
			return err
		}
		j.Status, j.DecidedBy, j.DecidedAt, j.DenyReason = StatusDenied, e.Actor, e.At, p.Reason
		j.PolicyRule = e.PolicyRule
	case EventExpired:
		j.Status, j.DecidedAt, j.PolicyRule = StatusExpired, e.At, e.PolicyRule
	case EventCancelled:
		var p ReasonPayload
		if err := decode(&p); err != nil {
			return err
		}
		j.Status, j.DecidedBy, j.DecidedAt, j.DenyReason = StatusCancelled, e.Actor, e.At, p.Reason
	case EventAutoApprovalRevoked:
		var p ReasonPayload
		if err := decode(&p); err != nil {
			return err
		}
		j.Status, j.AutoApproved, j.GrantID = StatusPending, false, ""
		j.PolicyRule, j.PolicyReason = e.PolicyRule, p.Reason
		j.DecidedBy, j.DecidedAt = Actor{}, time.Time{}
	case EventClaimed:
		var p ExecutorPayload
		if err := decode(&p); err != nil {
			return err
		}
		j.Status, j.ClaimedBy, j.ExecutedAt = StatusExecuting, p.ExecutorID, e.At
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
	case EventHashMismatch:
		j.Status, j.FinishedAt, j.PolicyRule = StatusFailed, e.At, e.PolicyRule
	case EventDecisionRejected, EventClaimRejected, EventExecutionStarted, EventAccessRefused:
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
