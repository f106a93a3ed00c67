// Package heartbeat is the sender every service runs (SPEC §9): trackers that record the real
// work of a service or of an agent it hosts (tasks in flight with their job ids, the last task's
// duration, recent errors) and a Sender that reports them to the heartbeat service at a fixed
// interval. Nothing here calls an LLM.
package heartbeat

import (
	"errors"
	"sort"
	"sync"
	"time"
)

// Status is what a tracker derives from its state. Timeout is never sent: only the heartbeat
// service decides that an agent went silent.
type Status string

// Statuses a sender reports.
const (
	StatusIdle  Status = "idle"
	StatusBusy  Status = "busy"
	StatusError Status = "error"
)

// DefaultErrorHold is how long a failed task keeps its tracker in error when no later task has
// succeeded: long enough for a few beats to carry it, short enough that a rarely used agent does
// not stay red for a fault nobody can act on anymore.
const DefaultErrorHold = 5 * time.Minute

// Tracker records the work of one service or agent. It is safe for concurrent use.
type Tracker struct {
	now func() time.Time

	mu           sync.Mutex
	next         uint64
	inflight     map[uint64]inflightTask
	lastDuration time.Duration
	lastErr      string
	lastErrCode  string
	lastErrAt    time.Time
	lastFailed   bool
	lastEndAt    time.Time
	note, noteEN string
}

// SetNote sets the standing note every heartbeat of this tracker carries, in Japanese and in
// English: the report shows the one of its locale.
func (t *Tracker) SetNote(ja, en string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.note, t.noteEN = ja, en
}

// Note is the standing note, in Japanese and in English.
func (t *Tracker) Note() (ja, en string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.note, t.noteEN
}

type inflightTask struct {
	jobID string
	start time.Time
}

// NewTracker returns an idle tracker; now replaces time.Now when not nil (tests).
func NewTracker(now func() time.Time) *Tracker {
	if now == nil {
		now = time.Now
	}
	return &Tracker{now: now, inflight: map[uint64]inflightTask{}}
}

// Task is one unit of work in flight. End it exactly once; later calls are ignored.
type Task struct {
	t    *Tracker
	id   uint64
	once sync.Once
}

// Begin records the start of a task for jobID ("" when the work has no job).
func (t *Tracker) Begin(jobID string) *Task {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	t.inflight[t.next] = inflightTask{jobID: jobID, start: t.now()}
	return &Task{t: t, id: t.next}
}

// End records the end of the task; a non-nil err makes the tracker report error until a later
// task succeeds or the error hold passes.
func (k *Task) End(err error) {
	if k == nil {
		return
	}
	k.once.Do(func() { k.t.end(k.id, err) })
}

func (t *Tracker) end(id uint64, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	task, ok := t.inflight[id]
	if !ok {
		return
	}
	delete(t.inflight, id)
	now := t.now()
	t.lastDuration = now.Sub(task.start)
	t.lastEndAt = now
	t.lastFailed = err != nil
	if err != nil {
		t.lastErrCode, t.lastErr = reportOf(err)
		t.lastErrAt = now
	}
}

// reported is a failure that says how a status report shows it: a stable code of its kind
// (which the report says in the reader's language) and a detail that is safe to show anyone.
// A model call's failure is one (llm.Failure): the provider's own words stay in the log.
type reported interface {
	error
	ReportCode() string
	ReportDetail() string
}

// reportOf is how err is reported: its code and safe detail, or no code and its text.
func reportOf(err error) (code, message string) {
	if r, ok := errors.AsType[reported](err); ok && r.ReportCode() != "" {
		return r.ReportCode(), r.ReportDetail()
	}
	return "", err.Error()
}

// RecordError records a failure that did not belong to a task (a background loop, a provider
// health check): it counts like a failed task of zero duration.
func (t *Tracker) RecordError(err error) {
	if err == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.lastEndAt = now
	t.lastFailed = true
	t.lastErrCode, t.lastErr = reportOf(err)
	t.lastErrAt = now
}

// Snapshot is a tracker's state at one instant.
type Snapshot struct {
	Status Status
	// JobIDs are the distinct job ids in flight, oldest task first.
	JobIDs           []string
	InFlight         int
	LastTaskDuration time.Duration
	// LastError is the most recent error; it is kept after recovery so a report can still show
	// what went wrong last. With LastErrorCode (the kind of failure, e.g. llm.unauthenticated)
	// it is only a short detail safe to show; without, the error's own text.
	LastError     string
	LastErrorCode string
	LastErrorAt   time.Time
}

// Snapshot derives the status: busy while a task is in flight, error while the most recent
// finished task failed less than errorHold ago, idle otherwise.
func (t *Tracker) Snapshot(errorHold time.Duration) Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	tasks := make([]inflightTask, 0, len(t.inflight))
	for _, task := range t.inflight {
		tasks = append(tasks, task)
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].start.Before(tasks[j].start) })
	seen := map[string]bool{}
	var jobs []string
	for _, task := range tasks {
		if task.jobID != "" && !seen[task.jobID] {
			seen[task.jobID] = true
			jobs = append(jobs, task.jobID)
		}
	}
	s := Snapshot{
		Status:           StatusIdle,
		JobIDs:           jobs,
		InFlight:         len(tasks),
		LastTaskDuration: t.lastDuration,
		LastError:        t.lastErr,
		LastErrorCode:    t.lastErrCode,
		LastErrorAt:      t.lastErrAt,
	}
	switch {
	case len(tasks) > 0:
		s.Status = StatusBusy
	case t.lastFailed && now.Sub(t.lastEndAt) < errorHold:
		s.Status = StatusError
	}
	return s
}

// Kind tells a service from an agent it hosts.
type Kind string

// Kinds of sender.
const (
	KindService Kind = "service"
	KindAgent   Kind = "agent"
)

// Agent is a named tracker: a service itself (kind service) or one of the five agents a service
// hosts (chat/Mio, worker/Shiro, order1/Aka, order2/Ao, order3/Gin).
type Agent struct {
	*Tracker
	ID    string
	Alias string
	Kind  Kind
}
