package heartbeat

import (
	"errors"
	"slices"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestTrackerSnapshot(t *testing.T) {
	errBoom := errors.New("provider: 503")
	const hold = time.Minute
	tests := []struct {
		name      string
		run       func(tr *Tracker, c *fakeClock)
		status    Status
		jobs      []string
		lastDur   time.Duration
		lastError string
	}{
		{name: "new tracker is idle", run: func(*Tracker, *fakeClock) {}, status: StatusIdle},
		{
			name: "task in flight is busy with its job",
			run: func(tr *Tracker, c *fakeClock) {
				tr.Begin("job_20260101_001")
			},
			status: StatusBusy, jobs: []string{"job_20260101_001"},
		},
		{
			name: "several jobs, oldest first, duplicates once, empty ids left out",
			run: func(tr *Tracker, c *fakeClock) {
				tr.Begin("job_20260101_002")
				c.advance(time.Millisecond)
				tr.Begin("")
				c.advance(time.Millisecond)
				tr.Begin("job_20260101_003")
				c.advance(time.Millisecond)
				tr.Begin("job_20260101_002")
			},
			status: StatusBusy, jobs: []string{"job_20260101_002", "job_20260101_003"},
		},
		{
			name: "finished task is idle with its duration",
			run: func(tr *Tracker, c *fakeClock) {
				k := tr.Begin("job_20260101_001")
				c.advance(1500 * time.Millisecond)
				k.End(nil)
			},
			status: StatusIdle, lastDur: 1500 * time.Millisecond,
		},
		{
			name: "failed task is error",
			run: func(tr *Tracker, c *fakeClock) {
				k := tr.Begin("job_20260101_001")
				c.advance(time.Second)
				k.End(errBoom)
			},
			status: StatusError, lastDur: time.Second, lastError: errBoom.Error(),
		},
		{
			name: "error ends after the hold, message kept",
			run: func(tr *Tracker, c *fakeClock) {
				tr.Begin("").End(errBoom)
				c.advance(hold)
			},
			status: StatusIdle, lastError: errBoom.Error(),
		},
		{
			name: "later success clears error",
			run: func(tr *Tracker, c *fakeClock) {
				tr.Begin("").End(errBoom)
				c.advance(time.Second)
				k := tr.Begin("")
				c.advance(2 * time.Second)
				k.End(nil)
			},
			status: StatusIdle, lastDur: 2 * time.Second, lastError: errBoom.Error(),
		},
		{
			name: "busy wins over a recent error",
			run: func(tr *Tracker, c *fakeClock) {
				tr.Begin("").End(errBoom)
				tr.Begin("job_20260101_009")
			},
			status: StatusBusy, jobs: []string{"job_20260101_009"}, lastError: errBoom.Error(),
		},
		{
			name: "ending twice counts once",
			run: func(tr *Tracker, c *fakeClock) {
				k := tr.Begin("")
				c.advance(time.Second)
				k.End(nil)
				c.advance(time.Second)
				k.End(errBoom)
			},
			status: StatusIdle, lastDur: time.Second,
		},
		{
			name: "error outside a task",
			run: func(tr *Tracker, c *fakeClock) {
				tr.RecordError(errBoom)
			},
			status: StatusError, lastError: errBoom.Error(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fakeClock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
			tr := NewTracker(c.now)
			tt.run(tr, c)
			got := tr.Snapshot(hold)
			if got.Status != tt.status {
				t.Errorf("status = %s, want %s", got.Status, tt.status)
			}
			if !slices.Equal(got.JobIDs, tt.jobs) {
				t.Errorf("jobs = %v, want %v", got.JobIDs, tt.jobs)
			}
			if got.LastTaskDuration != tt.lastDur {
				t.Errorf("last duration = %s, want %s", got.LastTaskDuration, tt.lastDur)
			}
			if got.LastError != tt.lastError {
				t.Errorf("last error = %q, want %q", got.LastError, tt.lastError)
			}
		})
	}
}
