// Package app holds the approval use cases; stores and the Auto-Approve grant store are
// interfaces implemented by the store package.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Store is the event store with its read model. Implementations: Postgres and SQLite.
type Store interface {
	// Create records the first events of a new job; ErrConflict when the id exists.
	Create(ctx context.Context, id string, drafts []domain.Draft) (domain.Job, error)
	// Update loads the job, lets fn decide, and appends fn's events and the new read model in
	// one transaction, guarded by the job's version. Events are recorded even when fn also
	// returns an error (a rejected decision is itself audited); that error is returned.
	Update(ctx context.Context, id string, fn func(domain.Job) ([]domain.Draft, error)) (domain.Job, error)
	// UpdateReading is Update with the events of stream (one that is not a job, e.g. the
	// Auto-Approve log) readable inside the same transaction, where Append to that stream
	// cannot interleave: an append committed before the read is seen, a later one commits
	// after this transaction. fn decides on what it reads there.
	UpdateReading(ctx context.Context, id, stream string, fn func(domain.Job, StreamReader) ([]domain.Draft, error)) (domain.Job, error)
	Get(ctx context.Context, id string) (domain.Job, error)
	List(ctx context.Context, f ListFilter) ([]domain.Job, error)
	// Events returns a job's (or a stream's) events in order.
	Events(ctx context.Context, id string) ([]domain.Event, error)
	// Append records events on a stream that is not a job (Auto-Approve changes, refused access).
	Append(ctx context.Context, stream string, drafts []domain.Draft) error
	// LastEvent returns the newest event of a stream whose type is one of types (nil when none).
	LastEvent(ctx context.Context, stream string, types ...domain.EventType) (*domain.Event, error)
	// JobIDsOfDay lists the ids of the jobs whose id starts with job_<day>_.
	JobIDsOfDay(ctx context.Context, day string) ([]string, error)

	// Requester notices (domain.NoticeOf): Update records them with the decision.

	// DueNotices returns the notices not yet done whose next attempt is due at now, oldest first.
	DueNotices(ctx context.Context, now time.Time, limit int) ([]domain.Notice, error)
	// ClaimNotice takes a due notice for one attempt (counted; not due again before retryAt) and
	// reports false when it is done or claimed by another dispatcher.
	ClaimNotice(ctx context.Context, jobID string, now, retryAt time.Time) (bool, error)
	// NoticeDone closes a notice with its outcome ("sent", or why it was given up).
	NoticeDone(ctx context.Context, jobID string, at time.Time, outcome string) error
}

// StreamReader reads a stream that is not a job inside a job's transaction (UpdateReading).
type StreamReader interface {
	// LastEvent returns the stream's newest event whose type is one of types (nil when none).
	LastEvent(types ...domain.EventType) (*domain.Event, error)
	// Events returns the stream's events in order.
	Events() ([]domain.Event, error)
}

// Leases are named leases that one replica holds at a time (the sweeper's), implemented by the
// stores. A replica that stops renewing loses its lease once it runs out.
type Leases interface {
	// AcquireLease gives name to holder until `until` when nobody holds it, when its holder let
	// it run out by now, or when holder has it already (a renewal); true when holder has it.
	AcquireLease(ctx context.Context, name, holder string, now, until time.Time) (bool, error)
	// ReleaseLease gives name up if holder has it, so another replica takes it at once.
	ReleaseLease(ctx context.Context, name, holder string) error
}

// ListFilter selects jobs; zero values do not filter.
type ListFilter struct {
	Statuses      []domain.Status
	SessionID     string
	ExpiresBefore time.Time
	Limit         int
	Offset        int
}

// GrantStore keeps the single active Auto-Approve grant; its expiry is the TTL of the entry.
type GrantStore interface {
	// Get returns nil, nil when no grant is active.
	Get(ctx context.Context) (*domain.Grant, error)
	Set(ctx context.Context, g domain.Grant, ttl time.Duration) error
	// Delete removes the grant and returns what was there.
	Delete(ctx context.Context) (*domain.Grant, error)
}

// PolicyEngine decides requests from a policy file (internal/policy). Explain also returns the
// facts the rules saw (the simulator shows them).
type PolicyEngine interface {
	Evaluate(cfg domain.PolicyConfig, in domain.PolicyInput, grant *domain.Grant, now time.Time) domain.Decision
	Explain(cfg domain.PolicyConfig, in domain.PolicyInput, grant *domain.Grant, now time.Time) (domain.Decision, map[string]any)
}

// Config is the policy and timing configuration of the use cases.
type Config struct {
	Policy domain.PolicyConfig
	// Engine, when set, decides with the policy file's rules; nil uses the built-in policy.
	Engine              PolicyEngine
	BroadOverwriteFiles int
	PendingTTL          time.Duration
	// AutoApproveAllowed gates turning Auto-Approve on at all (approval.auto_approve.enabled).
	AutoApproveAllowed bool
	DefaultGrantTTL    time.Duration
	MaxGrantTTL        time.Duration
	// ConsoleURL is the console's address as approvers reach it (approval.console_url); each
	// approval request then links to its job there.
	ConsoleURL string
	// DefaultScope is the scope of a grant asked for without any (a bare /auto-approve on).
	DefaultScope GrantInput
	Location     *time.Location
	// DefaultLocale is used when a request names none (config locale: ja or en).
	DefaultLocale string
	// ClaimLease is how long an executor's claim holds without a renewal (approval.claim_lease;
	// zero: domain.DefaultLeaseTTL).
	ClaimLease time.Duration
}

// Metrics receives what the service decides; the service package exports it to Prometheus.
type Metrics interface {
	// Request counts a new job by policy outcome (auto_approved, pending, refused).
	Request(outcome domain.Outcome)
	// Result counts decisions and claims: granted, denied, cancelled, expired, rejected,
	// claimed, claim_taken_over, report_rejected, auto_approval_revoked, hash_mismatch,
	// refused_approver.
	Result(kind string)
}

type noMetrics struct{}

func (noMetrics) Request(domain.Outcome) {}
func (noMetrics) Result(string)          {}

// WithMetrics reports outcomes to m.
func WithMetrics(m Metrics) Option { return func(s *Service) { s.metrics = m } }

// Service runs the use cases.
type Service struct {
	metrics  Metrics
	tracer   trace.Tracer
	notifier Notifier
	// kick wakes the notice dispatcher after a decision (buffered, one pending wake-up).
	kick      chan struct{}
	store     Store
	grants    GrantStore
	approvers *domain.Approvers
	cfg       Config
	now       func() time.Time
	log       *slog.Logger
	keys      *domain.Keyring
	leases    Leases
	images    ImageLog
	keeper    ImageKeeper

	// grantMu guards grantVerified: the hash of the newest decisive Auto-Approve event whose
	// stream last verified, and grantVerifiedSeq, that event's seq.
	grantMu          sync.Mutex
	grantVerified    string
	grantVerifiedSeq int64
}

// Option customises a Service.
type Option func(*Service)

// WithKeyring gives the service the audit keys, to verify the chains it shows.
func WithKeyring(k *domain.Keyring) Option { return func(s *Service) { s.keys = k } }

// WithTracer starts the service's own spans (an action on a job joining the job's trace) on tp.
func WithTracer(tp trace.TracerProvider) Option {
	return func(s *Service) { s.tracer = tp.Tracer("github.com/picoclaw-suite/picoclaw/services/approval") }
}

// WithNotifier delivers the notices owed to requesters' chats (RunNotices); without one they
// stay recorded and undelivered.
func WithNotifier(n Notifier) Option { return func(s *Service) { s.notifier = n } }

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithLeases lets replicas of the service share the sweeper: only the holder of its lease
// sweeps. Without leases every instance sweeps (one instance, tests).
func WithLeases(l Leases) Option { return func(s *Service) { s.leases = l } }

// New builds the service.
func New(store Store, grants GrantStore, approvers *domain.Approvers, cfg Config, log *slog.Logger, opts ...Option) *Service {
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{metrics: noMetrics{}, store: store, grants: grants, approvers: approvers, cfg: cfg, now: time.Now, log: log,
		tracer: noop.NewTracerProvider().Tracer(""), kick: make(chan struct{}, 1)}
	for _, o := range opts {
		o(s)
	}
	return s
}

func (s *Service) clock() time.Time { return domain.Normalize(s.now()) }

// joinJob starts span name for an action on job id in the job's trace (telemetry.JoinTrace): a
// call that arrived in a trace of its own (the REST API, the console, a typed command whose
// caller did not join it) is linked to it. A job that cannot be read yet has no trace to join.
func (s *Service) joinJob(ctx context.Context, id, name string) (context.Context, trace.Span) {
	ctx = jobid.WithJobID(ctx, id)
	j, err := s.store.Get(ctx, id)
	if err != nil {
		return s.tracer.Start(ctx, name)
	}
	return telemetry.JoinTrace(ctx, s.tracer, j.TraceParent, name)
}

func (s *Service) parseOpts() patch.Options {
	return patch.Options{BroadOverwriteFiles: s.cfg.BroadOverwriteFiles}
}

// normalizeID accepts job ids case-insensitively and with surrounding whitespace.
func normalizeID(id string) (string, error) {
	n, err := jobid.Normalize(id)
	if err != nil {
		return "", fmt.Errorf("%w: %v", domain.ErrInvalid, err)
	}
	return n, nil
}

// evaluate decides a request with the policy engine, or the built-in policy without one.
func (s *Service) evaluate(in domain.PolicyInput, grant *domain.Grant, now time.Time) domain.Decision {
	if s.cfg.Engine != nil {
		return s.cfg.Engine.Evaluate(s.cfg.Policy, in, grant, now)
	}
	return domain.Evaluate(s.cfg.Policy, in, grant, now)
}

// activeGrant returns the Auto-Approve grant in force, or nil. A store error counts as no grant:
// Auto-Approve fails closed.
func (s *Service) activeGrant(ctx context.Context, now time.Time) *domain.Grant {
	g, err := s.grantInForce(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "approval.auto_approve_unavailable", slog.String("error", err.Error()))
		return nil
	}
	if !g.ActiveAt(now) {
		return nil
	}
	return g
}

// Get returns one job.
func (s *Service) Get(ctx context.Context, id string) (domain.Job, error) {
	id, err := normalizeID(id)
	if err != nil {
		return domain.Job{}, err
	}
	return s.store.Get(ctx, id)
}

// List returns jobs, newest first.
func (s *Service) List(ctx context.Context, f ListFilter) ([]domain.Job, error) {
	for _, st := range f.Statuses {
		if !st.Valid() {
			return nil, fmt.Errorf("%w: unknown status %q", domain.ErrInvalid, st)
		}
	}
	if f.Limit <= 0 || f.Limit > 500 {
		f.Limit = 100
	}
	return s.store.List(ctx, f)
}

// Events returns a job's audit trail and whether its hash chain verifies.
func (s *Service) Events(ctx context.Context, id string) ([]domain.Event, bool, error) {
	id, err := normalizeID(id)
	if err != nil {
		return nil, false, err
	}
	evs, err := s.store.Events(ctx, id)
	if err != nil {
		return nil, false, err
	}
	if len(evs) == 0 {
		return nil, false, fmt.Errorf("events of %s: %w", id, domain.ErrNotFound)
	}
	chainErr := s.keys.VerifyChain(evs)
	if chainErr != nil {
		s.log.ErrorContext(jobid.WithJobID(ctx, id), "approval.chain_invalid", slog.String("error", chainErr.Error()))
	}
	return evs, chainErr == nil, nil
}
