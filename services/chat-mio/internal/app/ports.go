// Package app holds chat-mio's use cases: handling one inbound message (command or
// conversation), the approval conversation and delivering results.
//
// The peers chat-mio orchestrates are ports in chat-mio's own terms (Router, Approvals,
// Executor, Heartbeat, Notifier); the adapters in internal/peers speak their Connect APIs and
// classify their failures as domain errors, once. The rules that are chat-mio's own live in
// domain.
package app

import (
	"context"
	"time"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// SessionStore keeps session state. Every mutation is a single atomic store operation, so
// concurrent messages of one session never lose each other's updates.
type SessionStore interface {
	// Load returns the session with today's memory (day is domain.MemoryDay) bounded to the last
	// memoryTurns entries, and the day's note.
	Load(ctx context.Context, id, day string, memoryTurns int) (domain.Session, error)
	// LoadTurn is Load and, when eventID is not empty, the reply kept for that inbound event by
	// RecordTurn (nil when there is none, or it has expired), read together: one round trip, one
	// snapshot. An error means neither could be read.
	LoadTurn(ctx context.Context, id, day string, memoryTurns int, eventID string) (domain.Session, []byte, error)
	SetLocalOnly(ctx context.Context, id string, on bool) error
	SetPrevRoute(ctx context.Context, id, route string) error
	AddPending(ctx context.Context, id, jobID string) error
	RemovePending(ctx context.Context, id, jobID string) error
	// AppendTurns adds turns to the day's memory and trims it to the last memoryTurns entries;
	// the session is then among the day's ActiveSessions. The day's memory lives 48 h from the
	// last append (a store may keep the lifetime it has while that is within 30 s of it, so the
	// memory may end that much sooner).
	AppendTurns(ctx context.Context, id, day string, memoryTurns int, turns ...domain.Turn) error
	// RecordTurn writes what a handled message leaves behind in one atomic write: the turns
	// appended as AppendTurns does, the route set as SetPrevRoute does, and the reply kept for
	// the inbound event — each only when given (a record with none of them writes nothing). A
	// reader sees all of it or none of it: a kept reply never goes without its memory.
	RecordTurn(ctx context.Context, id string, rec TurnRecord) error
	// ActiveSessions lists the sessions with memory on day (for the daily cutover's summaries).
	ActiveSessions(ctx context.Context, day string) ([]string, error)
	// SaveNote keeps note as the session's note for day (the summary of the day before), only
	// when the day has none yet; saved reports whether this call stored it. Notes live as long
	// as memory does.
	SaveNote(ctx context.Context, id, day, note string) (saved bool, err error)
	// Forget drops the session's memory and notes of the given days (/forget).
	Forget(ctx context.Context, id string, days ...string) error
	// SaveOptions stores deliberation proposals (opaque bytes) for /pick.
	SaveOptions(ctx context.Context, jobID string, data []byte, ttl time.Duration) error
	// LoadOptions returns them, or domain.ErrNotFound.
	LoadOptions(ctx context.Context, jobID string) ([]byte, error)
}

// TurnRecord is what one handled message leaves in the session store (SessionStore.RecordTurn).
type TurnRecord struct {
	// Day and MemoryTurns are AppendTurns's: the day's memory the turns go to, and its bound.
	Day         string
	MemoryTurns int
	// Turns are appended to the day's memory; none leaves the memory as it is.
	Turns []domain.Turn
	// Route, when not empty, becomes the session's previous primary route.
	Route string
	// EventID, when not empty, keeps Reply (opaque bytes) as the answer to that inbound event
	// for ReplyTTL (0: for good), so a redelivered event gets the same answer instead of a
	// second turn; LoadTurn returns it.
	EventID  string
	Reply    []byte
	ReplyTTL time.Duration
}

// Empty reports whether the record writes nothing.
func (r TurnRecord) Empty() bool { return len(r.Turns) == 0 && r.Route == "" && r.EventID == "" }

// JobIDs allocates JobIDs (pkg/jobid.Allocator).
type JobIDs interface {
	Next(ctx context.Context) (string, error)
}

// Every port below returns errors classified as domain sentinels (domain.ErrUnavailable for
// anything transient, domain.ErrNotFound, domain.ErrConflict, domain.ErrForbidden,
// domain.ErrInvalid) wrapped in a *domain.PeerError that keeps the peer's message; an
// unexpected failure wraps none of them.

// Router decides the route of a message and runs the workers or coders (router-shiro).
type Router interface {
	Route(ctx context.Context, req RouteRequest) (RouteResult, error)
}

// Approvals is the approval service: proposals become jobs that a person (or the Auto-Approve
// grant) decides.
type Approvals interface {
	// Request asks approval to decide a proposal.
	Request(ctx context.Context, in ProposalInput) (ApprovalRequest, error)
	// Approve grants a pending job for by; a refusal carries approval's text in loc.
	Approve(ctx context.Context, jobID string, by Actor, loc domain.Locale) (ApprovalJob, error)
	// ApproveSimilar grants a pending job for by and allows similar jobs for ttl (zero: the
	// approval service's default) with a grant scoped from the job; the text confirms the scope.
	ApproveSimilar(ctx context.Context, jobID string, by Actor, ttl time.Duration, loc domain.Locale) (ApprovalJob, string, error)
	// Deny refuses a pending job for by, with an optional reason; a refusal carries approval's
	// text in loc.
	Deny(ctx context.Context, jobID string, by Actor, reason string, loc domain.Locale) (ApprovalJob, error)
	// Job reads a job's state.
	Job(ctx context.Context, jobID string) (ApprovalJob, error)
	// SetAutoApprove switches the Auto-Approve grant on; the answer is the status text.
	SetAutoApprove(ctx context.Context, in AutoApproveInput) (string, error)
	// DisableAutoApprove switches it off; the answer is the status text.
	DisableAutoApprove(ctx context.Context, by Actor, loc domain.Locale) (string, error)
	// AutoApproveStatus reads it.
	AutoApproveStatus(ctx context.Context, loc domain.Locale) (AutoApproveStatus, error)
}

// Executor runs approved jobs (it claims the approved content from approval itself).
type Executor interface {
	Execute(ctx context.Context, jobID string, loc domain.Locale) (Execution, error)
	// Check tries a proposal's patch against the workspace without writing (a dry run): a
	// stale diff or a file changed since the proposal is known before anyone is asked.
	Check(ctx context.Context, p Proposal, loc domain.Locale) (Check, error)
}

// Check is whether a proposal still applies to the workspace, and if not, why (user text).
type Check struct {
	Applies bool
	Text    string
}

// Heartbeat reports the state of every service and agent.
type Heartbeat interface {
	Report(ctx context.Context, loc domain.Locale) (string, error)
}

// Notifier pushes a message to a session outside of a reply (the gateway of its channel).
type Notifier interface {
	Push(ctx context.Context, n Notification) error
}

// Peers are the services chat-mio orchestrates.
type Peers struct {
	Router    Router
	Approvals Approvals
	Executor  Executor
	Heartbeat Heartbeat
	// Images records every image before it goes to a model (approval's image audit log);
	// without it no image is sent.
	Images ImageAudit
}

// ImageAudit is the image audit log.
type ImageAudit interface {
	// RecordImage writes the record of one image about to be sent; the image is sent only when
	// it succeeds.
	RecordImage(ctx context.Context, in ImageRecord) error
}

// ImageRecord is one image on its way to a model.
type ImageRecord struct {
	JobID, SessionID string
	Data             []byte
	MIMEType         string
	Provider, Model  string
}

// Actor is a person on a channel.
type Actor struct {
	ID      string
	Channel string
	// SessionID is the chat the person wrote in: approval tells the requester's chat of a
	// decision made in another one.
	SessionID string
}

// RouteRequest is one message for the router.
type RouteRequest struct {
	JobID, SessionID, Channel, Text string
	LocalOnly                       bool
	// Confirmed is the estimate a person approved (a cost confirmation's continuation).
	Confirmed *CostEstimate
	// PrevRoute is the SPEC name of the previous primary route ("" when none).
	PrevRoute string
	History   []domain.Turn
	Locale    domain.Locale
}

// Decision is how the router chose the route (shown to the channel with the reply).
type Decision struct {
	// Route and Source are SPEC names ("CODE", "COMMAND"); "" when unspecified.
	Route, Source string
	Confidence    float64
	Reason        string
	Evidence      []string
	Matched       string
}

// RouteResult is the router's answer.
type RouteResult struct {
	Decision Decision
	// FinalRoute is the SPEC name of the route that answered ("" when unspecified).
	FinalRoute string
	// Refusal, when set, is why the route was refused (e.g. CODE under local-only).
	Refusal      string
	Deliberation bool
	Proposals    []ProposalOption
	// Comparison summarises a deliberation's proposals.
	Comparison string
	Workers    []WorkerOutput
	Questions  []string
	// ErrorReason is why the worker loop failed; a local model that is missing or down reads
	// as llm.ParseLocalModelReason.
	ErrorReason string
}

// WorkerOutput is one worker step's result.
type WorkerOutput struct {
	Result      string
	NextActions []string
}

// ProposalOption is one coder's answer: a proposal or an error.
type ProposalOption struct {
	Order                   string
	Proposal                *Proposal
	ErrorCode, ErrorMessage string
	// Estimate comes with ErrorCode cost_over_limit: what the call would cost.
	Estimate *CostEstimate
}

// CostEstimate is the most a coder call is expected to cost.
type CostEstimate struct {
	Tokens  int64
	CostUSD float64
}

// Proposal is a coder's proposal. chat-mio reads its order and plan; the rest travels from the
// router to approval unchanged.
type Proposal struct {
	Order string
	Plan  string
	// Answer is true for a proposal without a patch (a design, review or analysis): its plan is
	// the answer, delivered to the user as such; approval only records it as completed
	// without execution.
	Answer bool
	// By names who answered: the order and its provider and model.
	By string
	// Content is the proposal in the peers' wire form, opaque to chat-mio.
	Content []byte
}

// ProposalInput asks approval to decide a proposal for a job.
type ProposalInput struct {
	JobID     string
	SessionID string
	Channel   string
	By        Actor
	// Route is the SPEC name of the route that made the proposal.
	Route    string
	Locale   domain.Locale
	Proposal Proposal
	// AnswerOnly records an answer without a patch as completed without execution.
	AnswerOnly bool
	// Cost, when set, makes the job a cost confirmation: it asks whether to continue a call of
	// Proposal.Order at about this cost (Proposal is then empty, Task says what was asked).
	Cost *CostEstimate
	Task string
}

// Outcome is approval's answer to a proposal.
type Outcome string

// Outcomes.
const (
	OutcomePending      Outcome = "pending"
	OutcomeAutoApproved Outcome = "auto_approved"
	OutcomeRefused      Outcome = "refused"
	// OutcomeAnswered: an answer recorded as completed without execution.
	OutcomeAnswered Outcome = "answered"
)

// ApprovalRequest is approval's answer to a proposal.
type ApprovalRequest struct {
	Outcome Outcome
	Job     ApprovalJob
	// PolicyRule is the rule that decided; Reason explains a refusal.
	PolicyRule, Reason string
	// Text is approval's request message for the channel ("" when it gave none).
	Text string
	// Card is the same request as a card for channels that show one (nil when none was given).
	Card *commonv1.ApprovalCard
}

// JobStatus is a job's state in approval, named as approval names it ("pending", "granted" ...).
type JobStatus string

// Job states chat-mio acts on.
const (
	StatusPending      JobStatus = "pending"
	StatusGranted      JobStatus = "granted"
	StatusAutoApproved JobStatus = "auto_approved"
)

// Executable reports whether the state is a recorded grant.
func (s JobStatus) Executable() bool { return s == StatusGranted || s == StatusAutoApproved }

// ApprovalJob is what chat-mio reads of a job.
type ApprovalJob struct {
	ID         string
	Status     JobStatus
	Summary    string
	DenyReason string
	// DecidedBy names who decided (a display name, else channel:id); empty for expiry or none.
	DecidedBy string
	// TraceParent is the job's trace (W3C traceparent): actions on the job join it.
	TraceParent string
	// CostConfirmation: the job asked whether to continue a coder call at about Cost.
	CostConfirmation bool
	Cost             CostEstimate
}

// AutoApproveInput switches the Auto-Approve grant on with a scope.
type AutoApproveInput struct {
	By Actor
	// TTL 0 means approval's default.
	TTL   time.Duration
	Paths []string
	Ops   []string
	// TaskTypes ("docs") and Routes ("CODE1") as typed.
	TaskTypes []string
	Routes    []string
	Locale    domain.Locale
}

// AutoApproveStatus is the grant's state.
type AutoApproveStatus struct {
	Active bool
	// Text is approval's status text ("" when it gave none).
	Text string
}

// Execution is the executor's result of a job.
type Execution struct {
	Success          bool
	Executed, Failed int
	// Text is the executor's result message ("" when it gave none); Summary the short form.
	Text, Summary string
	// Images are the job's screenshots, shown with the result.
	Images []*commonv1.Image
}

// Notification is a message pushed to a session.
type Notification struct {
	SessionID, JobID string
	// RetryKey makes a retried push deliver once.
	RetryKey string
	Text     string
	// Images go with the text (a job's screenshots).
	Images []*commonv1.Image
}

// USD is the estimate's cost, 0 for none.
func (e *CostEstimate) USD() float64 {
	if e == nil {
		return 0
	}
	return e.CostUSD
}

// TokenCount is the estimate's tokens, 0 for none.
func (e *CostEstimate) TokenCount() int64 {
	if e == nil {
		return 0
	}
	return e.Tokens
}
