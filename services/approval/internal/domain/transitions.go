package domain

import (
	"fmt"
	"time"
)

// Policy rules recorded on decisions that are not made by the policy evaluation itself.
const (
	RuleApprover          = "approver"
	RulePendingTTL        = "pending_ttl"
	RuleGrantInactive     = "auto_approve.inactive"
	RuleContentBinding    = "content_binding"
	RuleApproverList      = "approvers"
	RuleFirstDecisionWins = "first_decision_wins"
	// RuleClaimLease: a claim is a lease its holder renews; reports come from the holder only.
	RuleClaimLease = "claim_lease"
)

// DefaultLeaseTTL is how long a claim holds without a renewal when nothing else is configured.
const DefaultLeaseTTL = 2 * time.Minute

// System is the actor of events the service causes itself (sweeper, policy).
var System = Actor{ID: "approval", Channel: "system"}

func rejected(attempt string, j Job, actor Actor, reason string, at time.Time) Draft {
	return Draft{Type: EventDecisionRejected, Actor: actor, Channel: actor.Channel, At: at,
		PolicyRule: RuleFirstDecisionWins, Payload: RejectedPayload{Attempt: attempt, Status: j.Status, Reason: reason}}
}

// decide is the shared body of approve and deny: the first decision wins, a pending job past
// its expiry is expired (not denied), and every losing attempt is recorded.
func (j Job) decide(attempt string, win Draft, actor Actor, now time.Time) ([]Draft, error) {
	switch {
	case j.Status == StatusPending && !now.Before(j.ExpiresAt):
		return []Draft{
			{Type: EventExpired, Actor: System, Channel: System.Channel, At: now, PolicyRule: RulePendingTTL},
			rejected(attempt, Job{Status: StatusExpired}, actor, "expired", now),
		}, fmt.Errorf("%s: %w", attempt, Fail(ErrExpired, CodeExpired, j.ID, j.ExpiresAt.Format(time.RFC3339)))
	case j.Status == StatusPending:
		return []Draft{win}, nil
	default:
		return []Draft{rejected(attempt, j, actor, "already "+string(j.Status), now)},
			fmt.Errorf("%s: %w", attempt, Fail(ErrConflict, CodeAlreadyDecided, j.ID, State(j.Status)))
	}
}

// Approve grants a pending job for exactly its content.
func (j Job) Approve(actor Actor, now time.Time) ([]Draft, error) {
	return j.decide("approve", Draft{Type: EventGranted, Actor: actor, Channel: actor.Channel, At: now, PolicyRule: RuleApprover}, actor, now)
}

// Deny refuses a pending job; the reason is stored and returned.
func (j Job) Deny(actor Actor, reason string, now time.Time) ([]Draft, error) {
	return j.decide("deny", Draft{Type: EventDenied, Actor: actor, Channel: actor.Channel, At: now, PolicyRule: RuleApprover,
		Payload: ReasonPayload{Reason: reason}}, actor, now)
}

// Cancel withdraws a job that has not been claimed yet.
func (j Job) Cancel(actor Actor, reason string, now time.Time) ([]Draft, error) {
	switch j.Status {
	case StatusPending, StatusGranted, StatusAutoApproved:
		return []Draft{{Type: EventCancelled, Actor: actor, Channel: actor.Channel, At: now, Payload: ReasonPayload{Reason: reason}}}, nil
	}
	return []Draft{rejected("cancel", j, actor, "already "+string(j.Status), now)},
		fmt.Errorf("cancel: %w", Fail(ErrConflict, CodeAlreadyDecided, j.ID, State(j.Status)))
}

// Expire ends a pending job whose time is up; it does nothing otherwise.
func (j Job) Expire(now time.Time) []Draft {
	if j.Status != StatusPending || now.Before(j.ExpiresAt) {
		return nil
	}
	return []Draft{{Type: EventExpired, Actor: System, Channel: System.Channel, At: now, PolicyRule: RulePendingTTL}}
}

// RevokeAutoApproval sends an auto-approved, unclaimed job back to pending (Auto-Approve was
// switched off or its grant ended); why is one of the REVOKED_ codes of Texts.
func (j Job) RevokeAutoApproval(why string, now time.Time) []Draft {
	if j.Status != StatusAutoApproved {
		return nil
	}
	b := because(why)
	return []Draft{{Type: EventAutoApprovalRevoked, Actor: System, Channel: System.Channel, At: now,
		PolicyRule: RuleGrantInactive, Payload: ReasonPayload{Reason: b.English(), ReasonCode: b.Code}}}
}

// ClaimCheck is what the claim needs to know beyond the job: the hash the stored patch has now,
// whether the grant that auto-approved the job is still the active one, and how long the claim
// holds without a renewal.
type ClaimCheck struct {
	ExecutorID  string
	ActualHash  string
	ParseError  error
	GrantActive bool
	LeaseTTL    time.Duration
}

func leaseTTL(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultLeaseTTL
	}
	return d
}

// Claim hands an approved job to one executor: the claim is a lease that its holder renews
// while it runs. A job whose lease lapsed (its executor stopped) is taken over by the next
// claim, which records claim_lapsed and gets a new fencing token; a live claim is refused. A
// claim of a job whose stored content no longer hashes to the approved value records
// hash_mismatch and fails the job.
func (j Job) Claim(c ClaimCheck, now time.Time) ([]Draft, error) {
	actor := Actor{ID: c.ExecutorID, Channel: "executor"}
	reject := func(reason string, err error) ([]Draft, error) {
		return []Draft{{Type: EventClaimRejected, Actor: actor, Channel: actor.Channel, At: now,
			Payload: RejectedPayload{Attempt: "claim", Status: j.Status, Reason: reason}}}, err
	}
	if j.CostConfirmation {
		return reject("a cost confirmation is not run", Fail(ErrConflict, CodeCostNotRun, j.ID))
	}
	takeover := false
	if !j.Status.Claimable() {
		switch {
		case j.LeaseLapsed(now):
			takeover = true
		case j.Status == StatusExecuting:
			return reject("already claimed by "+j.ClaimedBy, Fail(ErrConflict, CodeClaimedBy,
				j.ID, j.ClaimedBy, j.LeaseExpiresAt.Format(time.RFC3339)))
		case j.Status == StatusCompleted || j.Status == StatusFailed:
			return reject("already claimed", Fail(ErrConflict, CodeAlreadyRun, j.ID))
		default:
			return reject("not approved: "+string(j.Status), Fail(ErrConflict, CodeNotApproved, j.ID, State(j.Status)))
		}
	}
	if c.ActualHash != j.ContentHash || c.ParseError != nil {
		detail := ""
		if c.ParseError != nil {
			detail = c.ParseError.Error()
		}
		return []Draft{{Type: EventHashMismatch, Actor: actor, Channel: actor.Channel, At: now, PolicyRule: RuleContentBinding,
				Payload: HashMismatchPayload{Source: "claim", Expected: j.ContentHash, Actual: c.ActualHash, Detail: detail}}},
			Fail(ErrHashMismatch, CodeContentChanged, j.ID)
	}
	if j.Status == StatusAutoApproved && !c.GrantActive {
		drafts := j.RevokeAutoApproval(CodeRevokedBeforeClaim, now)
		d, err := reject("auto-approve no longer active", Fail(ErrConflict, CodeAutoApproveEnded, j.ID))
		return append(drafts, d...), err
	}
	claimed := Draft{Type: EventClaimed, Actor: actor, Channel: actor.Channel, At: now, PolicyRule: RuleClaimLease,
		Payload: ExecutorPayload{ExecutorID: c.ExecutorID, LeaseUntil: now.Add(leaseTTL(c.LeaseTTL))}}
	if !takeover {
		return []Draft{claimed}, nil
	}
	lapsed := Draft{Type: EventClaimLapsed, Actor: actor, Channel: actor.Channel, At: now, PolicyRule: RuleClaimLease,
		Payload: LapsedPayload{ExecutorID: j.ClaimedBy, Token: j.ClaimToken, LeaseUntil: j.LeaseExpiresAt}}
	if j.AutoApproved && !c.GrantActive {
		// An auto-approved execution whose executor stopped, with Auto-Approve off (or its grant
		// ended) since: nothing allows running the rest of it now. The job fails — once: it is no
		// longer executing, so no executor tries to take it over again — and a person decides
		// anew (/retry). What the stopped executor changed stays as its journal says.
		failed := Draft{Type: EventExecutionFailed, Actor: System, Channel: System.Channel, At: now, PolicyRule: RuleAutoApprove,
			Payload: ExecutionPayload{ExecutorID: j.ClaimedBy, Detail: TakeoverRefusedDetail}}
		return []Draft{lapsed, failed}, Fail(ErrConflict, CodeAutoRunStopped, j.ID)
	}
	// The execution the lapsed holder started goes on under the new one (which finds out from
	// the workspace what of it happened).
	return []Draft{lapsed, claimed}, nil
}

// TakeoverRefusedDetail is the failure of an auto-approved execution that stopped when the
// grant that allowed it is no longer in force.
const TakeoverRefusedDetail = "the executor stopped during an auto-approved execution, and Auto-Approve is no longer in force: the rest is not run without a person (operations already applied stay applied)"

// holds checks that executorID, with the fencing token it was given, holds the job's claim.
// An executing job's refusal is recorded (report_rejected): it shows an executor acting on a
// claim it lost.
func (j Job) holds(attempt, executorID string, token int64, now time.Time) ([]Draft, error) {
	if j.Status != StatusExecuting {
		return nil, fmt.Errorf("%s for %s: %w: job is %s, not executing", attempt, j.ID, ErrConflict, j.Status)
	}
	if executorID != "" && executorID == j.ClaimedBy && token != 0 && token == j.ClaimToken {
		return nil, nil
	}
	actor := Actor{ID: executorID, Channel: "executor"}
	reason := fmt.Sprintf("claim held by %s (token %d), not by %s (token %d)", j.ClaimedBy, j.ClaimToken, executorID, token)
	return []Draft{{Type: EventReportRejected, Actor: actor, Channel: actor.Channel, At: now, PolicyRule: RuleClaimLease,
			Payload: RejectedPayload{Attempt: attempt, Status: j.Status, Reason: reason}}},
		fmt.Errorf("%s for %s: %w: %s", attempt, j.ID, ErrNotHolder, reason)
}

// Renew extends the holder's lease by ttl from now. Renewing a lease that ran out is allowed
// while nobody took the job over: the holder is still the only one.
func (j Job) Renew(executorID string, token int64, ttl time.Duration, now time.Time) ([]Draft, error) {
	if drafts, err := j.holds("renew", executorID, token, now); err != nil {
		return drafts, err
	}
	return []Draft{{Type: EventClaimRenewed, Actor: Actor{ID: executorID, Channel: "executor"}, Channel: "executor", At: now,
		PolicyRule: RuleClaimLease, Payload: ExecutorPayload{ExecutorID: executorID, LeaseUntil: now.Add(leaseTTL(ttl))}}}, nil
}

// ExecutionKind is what the executor reports.
type ExecutionKind string

const (
	ExecStarted      ExecutionKind = "started"
	ExecCompleted    ExecutionKind = "completed"
	ExecFailed       ExecutionKind = "failed"
	ExecHashMismatch ExecutionKind = "hash_mismatch"
	ExecRefused      ExecutionKind = "refused"
)

// Report records the executor's progress on a claimed job; only the claim's holder, with its
// fencing token, may report.
func (j Job) Report(kind ExecutionKind, executorID string, token int64, p ExecutionPayload, now time.Time) ([]Draft, error) {
	if drafts, err := j.holds("report "+string(kind), executorID, token, now); err != nil {
		return drafts, err
	}
	actor := Actor{ID: executorID, Channel: "executor"}
	p.ExecutorID = executorID
	d := Draft{Actor: actor, Channel: actor.Channel, At: now, Payload: p}
	switch kind {
	case ExecStarted:
		d.Type = EventExecutionStarted
	case ExecCompleted:
		d.Type = EventExecutionCompleted
	case ExecFailed:
		d.Type = EventExecutionFailed
	case ExecRefused:
		d.Type = EventExecutionRefused
	case ExecHashMismatch:
		d.Type, d.PolicyRule = EventHashMismatch, RuleContentBinding
		d.Payload = HashMismatchPayload{Source: "executor", Expected: j.ContentHash, Detail: p.Detail}
	default:
		return nil, fmt.Errorf("report for %s: %w: unknown execution event %q", j.ID, ErrInvalid, kind)
	}
	return []Draft{d}, nil
}
