package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

// Claim is what approval hands over for a job.
type Claim struct {
	JobID string
	// Status is the job's state as approval reports it ("granted", "auto_approved", ...).
	Status string
	Patch  string
	// ContentHash is the hash the grant is bound to; JobHash is the read model's copy. Both
	// must match the recomputed hash.
	ContentHash  string
	JobHash      string
	AutoApproved bool
	UsesBrowser  bool
	// Token fences the claim: every report and renewal carries it. LeaseExpiresAt is when the
	// claim lapses unless renewed.
	Token          int64
	LeaseExpiresAt time.Time
}

// Event is what the executor reports to approval.
type Event int

const (
	EventStarted Event = iota + 1
	EventCompleted
	EventFailed
	EventHashMismatch
	EventRefused
)

func (e Event) String() string {
	switch e {
	case EventStarted:
		return "execution_started"
	case EventCompleted:
		return "execution_completed"
	case EventFailed:
		return "execution_failed"
	case EventHashMismatch:
		return "hash_mismatch"
	case EventRefused:
		return "execution_refused"
	}
	return "unknown"
}

// Report is one execution event for the audit log.
type Report struct {
	JobID      string
	Event      Event
	Result     *domain.Result
	Detail     string
	ExecutorID string
	// Token is the claim's fencing token.
	Token int64
}

// Approval is the approval service as the executor uses it.
type Approval interface {
	// Claim takes the job for execution: once, or by taking over a claim whose lease lapsed.
	// Refusals come back as domain errors that carry approval's text for the user, in locale.
	Claim(ctx context.Context, jobID, executorID, locale string) (Claim, error)
	// Renew extends the claim's lease; domain.ErrConflict when another executor holds it now.
	Renew(ctx context.Context, jobID, executorID string, token int64) (time.Time, error)
	// Lapsed lists executing jobs whose holder stopped renewing its lease.
	Lapsed(ctx context.Context) ([]string, error)
	// Get reads the job without claiming it (dry runs).
	Get(ctx context.Context, jobID string) (Claim, error)
	Report(ctx context.Context, r Report) error
}

// Parser parses patch text into the canonical operation list (pkg/patch.Parse).
type Parser func(text string) (*patch.Patch, error)

// Config configures the Service.
type Config struct {
	Approval Approval
	Parse    Parser
	Runner   *Runner
	Modes    Modes
	// ExecutorID names this executor (replica) as the holder of its claims.
	ExecutorID string
	// Journal is shared by the executors of one workspace (internal/journal); nil for an
	// executor that shares its workspace with nobody and keeps no record across restarts.
	Journal Journal
	Locale  string
	Logger  *slog.Logger
	// ReportTimeout bounds reports sent after the caller's context may have ended.
	ReportTimeout time.Duration
}

// Service is the executor's use cases.
type Service struct {
	cfg Config
	// slot lets one job at a time use the workspace, so snapshots and rollbacks of
	// concurrent jobs cannot interleave.
	slot chan struct{}
}

// NewService returns the Service.
func NewService(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ReportTimeout <= 0 {
		cfg.ReportTimeout = 10 * time.Second
	}
	return &Service{cfg: cfg, slot: make(chan struct{}, 1)}
}

// Outcome is a finished Execute or DryRun.
type Outcome struct {
	Result *domain.Result
	Text   string
}

// Execute claims jobID from approval, verifies the content hash and runs it. dryRun reads the
// job without claiming it and only reports what would happen.
func (s *Service) Execute(ctx context.Context, rawID, locale string, dryRun bool) (Outcome, error) {
	return s.execute(ctx, rawID, locale, dryRun, false)
}

// execute is Execute; with takeover it only claims a job that is still executing once it has the
// workspace (another executor may have taken the job over and finished it meanwhile).
func (s *Service) execute(ctx context.Context, rawID, locale string, dryRun, takeover bool) (Outcome, error) {
	id, err := jobid.Normalize(rawID)
	if err != nil {
		return Outcome{}, fmt.Errorf("%w: %v", domain.ErrInvalid, err)
	}
	ctx = jobid.WithJobID(ctx, id)
	// job_id comes from the baggage on ctx; the logger adds it to every line.
	log := s.cfg.Logger
	loc := domain.ParseLocale(locale, s.cfg.Locale)
	modes := s.cfg.Modes
	modes.DryRun = modes.DryRun || dryRun

	select {
	case s.slot <- struct{}{}:
		defer func() { <-s.slot }()
	case <-ctx.Done():
		return Outcome{}, fmt.Errorf("%w: waiting for the workspace: %v", domain.ErrUnavailable, ctx.Err())
	}

	var claim Claim
	if modes.DryRun {
		claim, err = s.cfg.Approval.Get(ctx, id)
		if err == nil && claim.Status != "granted" && claim.Status != "auto_approved" {
			err = domain.Fail(domain.ErrConflict, domain.CodeNotApproved, id, domain.State(claim.Status))
		}
		if err != nil {
			log.WarnContext(ctx, "executor.dry_run_refused", slog.String("error", err.Error()))
			return Outcome{}, err
		}
	} else {
		// One executor at a time changes the workspace, across the replicas that share it.
		unlock, err := s.lockWorkspace(ctx)
		if err != nil {
			return Outcome{}, err
		}
		defer unlock()
		if takeover {
			if c, err := s.cfg.Approval.Get(ctx, id); err != nil || c.Status != "executing" {
				return Outcome{}, fmt.Errorf("take over %s: %w: no longer executing (%v)", id, errClaimRefused, err)
			}
		}
		claim, err = s.cfg.Approval.Claim(ctx, id, s.cfg.ExecutorID, string(loc))
		if err != nil {
			// approval recorded the refusal itself; the job may well be running at another
			// executor, whose claim a report from here must not touch.
			log.WarnContext(ctx, "executor.claim_refused", slog.String("error", err.Error()))
			return Outcome{}, fmt.Errorf("claim %s: %w: %w", id, errClaimRefused, err)
		}
		log.InfoContext(ctx, "executor.claimed", slog.Bool("auto_approved", claim.AutoApproved), slog.Int64("lease_token", claim.Token))
		// The job stops when another executor took the claim over (this one looked dead).
		var l *lease
		ctx, l = s.keepLease(ctx, log, claim)
		defer l.stop()
		out, err, done := s.resume(ctx, log, claim, loc)
		if done {
			return out, err
		}
		return s.run(ctx, log, claim, modes, loc, l)
	}
	return s.run(ctx, log, claim, modes, loc, nil)
}

// run checks and runs a claimed job (or, in a dry run, one read without a claim) and reports
// its outcome; l is the claim's lease (nil in a dry run).
func (s *Service) run(ctx context.Context, log *slog.Logger, claim Claim, modes Modes, loc domain.Locale, l *lease) (Outcome, error) {
	id := claim.JobID
	p, err := s.cfg.Parse(claim.Patch)
	if err != nil {
		// Content that does not parse does not hash to what was approved either.
		err = domain.FailWith(domain.ErrHashMismatch, err, domain.CodeHashMismatch, id, "-", short(claim.ContentHash))
	} else if p.Hash != claim.ContentHash || (claim.JobHash != "" && claim.JobHash != claim.ContentHash) {
		err = domain.Fail(domain.ErrHashMismatch, domain.CodeHashMismatch, id, short(p.Hash), short(claim.ContentHash))
	}
	if err != nil {
		log.ErrorContext(ctx, "executor.hash_mismatch", slog.String("error", err.Error()))
		if !modes.DryRun {
			s.report(ctx, log, claim, Report{Event: EventHashMismatch, Detail: err.Error()})
		}
		return Outcome{}, err
	}

	if (claim.UsesBrowser || usesBrowser(p)) && claim.AutoApproved {
		err := domain.Fail(domain.ErrPermission, domain.CodeBrowserAutoApproved, id)
		log.WarnContext(ctx, "executor.refused", slog.String("reason", "browser_auto_approved"))
		if !modes.DryRun {
			s.report(ctx, log, claim, Report{Event: EventRefused, Detail: err.Error()})
		}
		return Outcome{}, err
	}

	if err := s.cfg.Runner.checkBase(id, p); err != nil {
		log.WarnContext(ctx, "executor.refused", slog.String("reason", "stale_base"), slog.String("error", err.Error()))
		if !modes.DryRun {
			s.report(ctx, log, claim, Report{Event: EventRefused, Detail: err.Error()})
		}
		return Outcome{}, err
	}

	if modes.DryRun {
		res := s.cfg.Runner.Run(ctx, id, p.Operations, modes)
		return Outcome{Result: res, Text: res.Text(loc)}, nil
	}
	snap, refused := s.cfg.Runner.prepare(ctx, id, p.Operations, modes)
	if refused != nil {
		s.report(ctx, log, claim, Report{Event: EventFailed, Result: refused, Detail: refused.Summary(domain.LocaleJA)})
		return Outcome{Result: refused, Text: refused.Text(loc)}, nil
	}
	// Written down before anything changes: an executor that takes the job over after this one
	// stopped knows what to undo.
	if err := s.journalStarted(claim, p, snap); err != nil {
		log.ErrorContext(ctx, "executor.journal_failed", slog.String("error", err.Error()))
		s.report(ctx, log, claim, Report{Event: EventFailed, Detail: "could not record the job before running it: " + err.Error()})
		return Outcome{}, fmt.Errorf("%w: journal: %v", domain.ErrUnavailable, err)
	}
	if err := s.cfg.Approval.Report(ctx, Report{JobID: id, Event: EventStarted, ExecutorID: s.cfg.ExecutorID, Token: claim.Token}); err != nil {
		// Nothing runs that the audit log does not know about.
		log.ErrorContext(ctx, "executor.report_failed", slog.String("event", EventStarted.String()), slog.String("error", err.Error()))
		s.forget(log, id)
		s.report(ctx, log, claim, Report{Event: EventFailed, Detail: "could not record execution start: " + err.Error()})
		return Outcome{}, fmt.Errorf("report start of %s: %w", id, err)
	}

	res := s.cfg.Runner.run(ctx, id, p.Operations, modes, snap)
	if l != nil && l.lost() {
		// Another executor holds the job now and waits for the workspace: it finds the record
		// of a job that stopped midway, and what this one changed is rolled back.
		log.WarnContext(ctx, "executor.lease_lost_during_run", slog.Bool("rolled_back", res.RolledBack))
		return Outcome{}, domain.Fail(domain.ErrConflict, domain.CodeTakenOver, id)
	}
	s.finish(ctx, log, claim, res)
	return Outcome{Result: res, Text: res.Text(loc)}, nil
}

// finish records a job's result in the journal, then reports it; the record goes once approval
// has it, so a report that failed is made by whoever takes the job over.
func (s *Service) finish(ctx context.Context, log *slog.Logger, claim Claim, res *domain.Result) {
	if err := s.journalDone(claim, res); err != nil {
		log.ErrorContext(ctx, "executor.journal_failed", slog.String("error", err.Error()))
	}
	ev := EventCompleted
	if !res.Success {
		ev = EventFailed
	}
	if s.report(ctx, log, claim, Report{Event: ev, Result: res, Detail: res.Summary(domain.LocaleJA)}) {
		s.forget(log, claim.JobID)
	}
}

// errClaimRefused marks an Execute that approval did not give the job to.
var errClaimRefused = errors.New("claim refused")

// DryRun parses patch text and reports what it would do, touching nothing.
func (s *Service) DryRun(ctx context.Context, text, locale string) (Outcome, error) {
	p, err := s.cfg.Parse(text)
	if err != nil {
		return Outcome{}, domain.FailWith(domain.ErrInvalid, err, domain.CodePatchInvalid)
	}
	if err := s.cfg.Runner.checkBase("", p); err != nil {
		return Outcome{}, err
	}
	modes := s.cfg.Modes
	modes.DryRun = true
	res := s.cfg.Runner.Run(ctx, "", p.Operations, modes)
	return Outcome{Result: res, Text: res.Text(domain.ParseLocale(locale, s.cfg.Locale))}, nil
}

// report sends an event about the claimed job to approval, as the claim's holder, even when the
// caller has gone away; failures are logged. It reports whether approval recorded it.
func (s *Service) report(ctx context.Context, log *slog.Logger, claim Claim, r Report) bool {
	r.JobID, r.ExecutorID, r.Token = claim.JobID, s.cfg.ExecutorID, claim.Token
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ReportTimeout)
	defer cancel()
	if err := s.cfg.Approval.Report(rctx, r); err != nil {
		level := slog.LevelError
		if errorsIsAny(err, domain.ErrNotFound) {
			level = slog.LevelWarn
		}
		log.Log(ctx, level, "executor.report_failed", slog.String("event", r.Event.String()), slog.String("error", err.Error()))
		return false
	}
	return true
}

func usesBrowser(p *patch.Patch) bool {
	for _, op := range p.Operations {
		if op.Type == patch.TypeBrowser {
			return true
		}
	}
	return false
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
