package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/workspace"
)

// Several executors (replicas) share one workspace and its journal (docs/scaling.md): one of
// them at a time changes the workspace (the journal's lock); a claim is a lease its holder
// renews while the job runs; an executor whose holder stopped renewing is taken over by
// another, which reads the journal to learn what of the job happened.

// Journal phases of a job.
const (
	// PhaseStarted: the job is about to change the workspace; Snapshot says what its paths held.
	PhaseStarted = "started"
	// PhaseDone: the job ran; Result is its outcome, not yet (known to be) in approval.
	PhaseDone = "done"
)

// JobRecord is what the journal keeps about a job.
type JobRecord struct {
	JobID       string `json:"job_id"`
	ContentHash string `json:"content_hash"`
	// Holder is the executor that wrote the record.
	Holder string `json:"holder"`
	Phase  string `json:"phase"`
	// Snapshot is what the job's paths held before it (workspace.Snapshot.Encode); empty when
	// rollback_on_failure is off.
	Snapshot []byte `json:"snapshot,omitempty"`
	// FilesOnly: the job has only file operations, so after a rollback running it again has
	// the effect of running it once. A shell, git or browser operation may have acted already.
	FilesOnly bool           `json:"files_only"`
	Result    *domain.Result `json:"result,omitempty"`
	At        time.Time      `json:"at"`
}

// Journal is the record the executors of one workspace share (internal/journal).
type Journal interface {
	// Lock takes the workspace for one job, waiting until ctx ends while another has it.
	Lock(ctx context.Context) (unlock func(), err error)
	Write(r JobRecord) error
	Read(jobID string) (JobRecord, bool, error)
	Remove(jobID string) error
	// Prune removes records older than age.
	Prune(age time.Duration) (int, error)
}

func (s *Service) lockWorkspace(ctx context.Context) (func(), error) {
	if s.cfg.Journal == nil {
		return func() {}, nil
	}
	unlock, err := s.cfg.Journal.Lock(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: waiting for the workspace: %v", domain.ErrUnavailable, err)
	}
	return unlock, nil
}

func (s *Service) journalStarted(claim Claim, p *patch.Patch, snap *workspace.Snapshot) error {
	if s.cfg.Journal == nil {
		return nil
	}
	r := JobRecord{JobID: claim.JobID, ContentHash: claim.ContentHash, Holder: s.cfg.ExecutorID, Phase: PhaseStarted,
		FilesOnly: filesOnly(p.Operations), At: time.Now().UTC()}
	if snap != nil {
		data, err := snap.Encode()
		if err != nil {
			return err
		}
		r.Snapshot = data
	}
	return s.cfg.Journal.Write(r)
}

func (s *Service) journalDone(claim Claim, res *domain.Result) error {
	if s.cfg.Journal == nil {
		return nil
	}
	return s.cfg.Journal.Write(JobRecord{JobID: claim.JobID, ContentHash: claim.ContentHash, Holder: s.cfg.ExecutorID,
		Phase: PhaseDone, Result: res, At: time.Now().UTC()})
}

// forget removes the job's record once approval has the outcome.
func (s *Service) forget(log *slog.Logger, jobID string) {
	if s.cfg.Journal == nil {
		return
	}
	if err := s.cfg.Journal.Remove(jobID); err != nil {
		log.Warn("executor.journal_failed", slog.String("job_id", jobID), slog.String("error", err.Error()))
	}
}

func filesOnly(ops []patch.Operation) bool {
	for _, op := range ops {
		if op.Type != patch.TypeFileEdit {
			return false
		}
	}
	return true
}

// resume looks at the journal for a job this executor just claimed. done is false when there is
// nothing to resume (no record, a record of other content) or when the job, rolled back, is to
// run from the start; otherwise out and err are the job's outcome.
func (s *Service) resume(ctx context.Context, log *slog.Logger, claim Claim, loc domain.Locale) (out Outcome, err error, done bool) {
	if s.cfg.Journal == nil {
		return Outcome{}, nil, false
	}
	rec, ok, err := s.cfg.Journal.Read(claim.JobID)
	if err != nil {
		log.ErrorContext(ctx, "executor.journal_failed", slog.String("error", err.Error()))
		s.report(ctx, log, claim, Report{Event: EventFailed, Detail: "the job's journal record cannot be read: " + err.Error()})
		return Outcome{}, fmt.Errorf("%w: journal: %v", domain.ErrUnavailable, err), true
	}
	if !ok || rec.ContentHash != claim.ContentHash {
		return Outcome{}, nil, false
	}
	log.WarnContext(ctx, "executor.resuming", slog.String("phase", rec.Phase), slog.String("previous_holder", rec.Holder))
	switch rec.Phase {
	case PhaseDone:
		// It ran; only its report did not make it. Reported now, never applied again.
		res := rec.Result
		if res == nil {
			res = &domain.Result{JobID: claim.JobID}
		}
		s.finish(ctx, log, claim, res)
		return Outcome{Result: res, Text: res.Text(loc)}, nil, true
	case PhaseStarted:
		return s.rollBackInterrupted(ctx, log, claim, rec)
	}
	return Outcome{}, nil, false
}

// rollBackInterrupted restores what a job that stopped midway had changed. A job of file
// operations then runs again from the start (done false): the same as running once. Any other
// job is failed: its commands may have acted, and none runs twice.
func (s *Service) rollBackInterrupted(ctx context.Context, log *slog.Logger, claim Claim, rec JobRecord) (Outcome, error, bool) {
	id := claim.JobID
	var restored []string
	var rerr error
	if len(rec.Snapshot) > 0 {
		snap, err := s.cfg.Runner.cfg.Workspace.Decode(rec.Snapshot)
		if err == nil {
			restored, err = snap.Restore()
		}
		rerr = err
	}
	log.WarnContext(ctx, "executor.interrupted_job_rolled_back", slog.Any("restored_paths", restored), slog.Bool("snapshot", len(rec.Snapshot) > 0),
		slog.Any("error", rerr))
	if rec.FilesOnly && len(rec.Snapshot) > 0 && rerr == nil {
		return Outcome{}, nil, false
	}
	var refusal error
	switch {
	case len(rec.Snapshot) == 0:
		refusal = domain.Fail(domain.ErrConflict, domain.CodeInterruptedKept, id)
	case rerr != nil:
		refusal = domain.FailWith(domain.ErrConflict, rerr, domain.CodeInterruptedStuck, id)
	default:
		refusal = domain.Fail(domain.ErrConflict, domain.CodeInterruptedUndone, id)
	}
	res := &domain.Result{JobID: id, RolledBack: len(restored) > 0, RestoredPaths: restored, StartedAt: rec.At, FinishedAt: time.Now().UTC()}
	if rerr != nil {
		rb := domain.FailWith(nil, rerr, domain.CodeRollbackIncomplete)
		res.RollbackError, res.RollbackFailure = rb.Error(), domain.FailureOf(rb)
	}
	if s.report(ctx, log, claim, Report{Event: EventFailed, Result: res, Detail: refusal.Error()}) {
		s.forget(log, id)
	}
	return Outcome{}, refusal, true
}

// lease renews a claim while its job runs.
type lease struct {
	cancel context.CancelFunc
	done   chan struct{}
	gone   atomic.Bool
	once   sync.Once
}

// lost reports whether approval said another executor holds the claim now.
func (l *lease) lost() bool { return l.gone.Load() }

// stop ends the renewals.
func (l *lease) stop() {
	l.once.Do(func() {
		l.cancel()
		<-l.done
	})
}

// keepLease renews the claim at a third of what is left of its lease, until stop. When
// approval answers that another executor holds the claim, the job's context (the returned one)
// is cancelled: its remaining operations are skipped and what it changed is rolled back.
func (s *Service) keepLease(ctx context.Context, log *slog.Logger, c Claim) (context.Context, *lease) {
	jobCtx, cancelJob := context.WithCancel(ctx)
	rctx, stopRenewing := context.WithCancel(context.WithoutCancel(ctx))
	l := &lease{done: make(chan struct{}), cancel: func() { stopRenewing(); cancelJob() }}
	go func() {
		defer close(l.done)
		until := c.LeaseExpiresAt
		for {
			wait := max(time.Until(until)/3, 50*time.Millisecond)
			select {
			case <-rctx.Done():
				return
			case <-time.After(wait):
			}
			next, err := s.cfg.Approval.Renew(rctx, c.JobID, s.cfg.ExecutorID, c.Token)
			switch {
			case err == nil:
				until = next
			case rctx.Err() != nil:
				return
			case errors.Is(err, domain.ErrConflict) || errors.Is(err, domain.ErrNotFound):
				log.ErrorContext(ctx, "executor.lease_lost", slog.String("error", err.Error()))
				l.gone.Store(true)
				cancelJob()
				return
			default:
				// Approval unreachable: try again; the lease may lapse meanwhile, and the
				// next answer then says whether another executor took the job.
				log.WarnContext(ctx, "executor.lease_renewal_failed", slog.String("error", err.Error()))
				until = time.Now().Add(3 * time.Second)
			}
		}
	}()
	return jobCtx, l
}

// journalRetention is how long a record is kept that nobody removed (its outcome reached
// approval, then the executor stopped before removing it).
const journalRetention = 7 * 24 * time.Hour

// TakeOver claims, one by one, the jobs whose holder stopped renewing its lease, and finishes
// each from the journal: reported when it was done, rolled back (and run again when it is
// file operations only) when it stopped midway, run when it never started. It returns how many
// it took.
func (s *Service) TakeOver(ctx context.Context) (int, error) {
	ids, err := s.cfg.Approval.Lapsed(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		jctx := jobid.WithJobID(ctx, id)
		out, err := s.execute(jctx, id, "", false, true)
		switch {
		case errors.Is(err, errClaimRefused):
			// Another executor was quicker, or the job ended meanwhile.
		case err != nil:
			s.cfg.Logger.WarnContext(jctx, "executor.takeover_failed", slog.String("error", err.Error()))
			n++
		default:
			s.cfg.Logger.InfoContext(jctx, "executor.taken_over", slog.Bool("success", out.Result != nil && out.Result.Success))
			n++
		}
	}
	return n, nil
}

// RunTakeover looks for lapsed claims every `every` until ctx ends.
func (s *Service) RunTakeover(ctx context.Context, every time.Duration) {
	runner.Every(ctx, every, func() {
		if _, err := s.TakeOver(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.WarnContext(ctx, "executor.takeover_scan_failed", slog.String("error", err.Error()))
		}
		if s.cfg.Journal != nil {
			if n, err := s.cfg.Journal.Prune(journalRetention); err == nil && n > 0 {
				s.cfg.Logger.InfoContext(ctx, "executor.journal_pruned", slog.Int("records", n))
			}
		}
	})
}
