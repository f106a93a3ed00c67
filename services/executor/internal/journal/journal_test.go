package journal

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/executor/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

// Records survive a reopen (another executor on the same directory), are replaced whole and
// removed; ids that could leave the directory are refused.
func TestRecords(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := j.Read("job_20260101_001"); ok || err != nil {
		t.Fatalf("empty journal: %v, %v", ok, err)
	}
	started := app.JobRecord{JobID: "job_20260101_001", ContentHash: "h", Holder: "executor@a", Phase: app.PhaseStarted, Snapshot: []byte(`[]`), FilesOnly: true}
	if err := j.Write(started); err != nil {
		t.Fatal(err)
	}
	done := started
	done.Phase, done.Snapshot, done.Result = app.PhaseDone, nil, &domain.Result{JobID: "job_20260101_001", Success: true, Executed: 2}
	if err := j.Write(done); err != nil {
		t.Fatal(err)
	}
	other, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := other.Read("job_20260101_001")
	if err != nil || !ok || got.Phase != app.PhaseDone || got.Result == nil || got.Result.Executed != 2 || got.Holder != "executor@a" {
		t.Fatalf("read back %+v, %v, %v", got, ok, err)
	}
	if err := other.Remove("job_20260101_001"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := j.Read("job_20260101_001"); ok {
		t.Fatal("a removed record is still there")
	}
	if err := j.Remove("job_20260101_001"); err != nil {
		t.Fatalf("removing twice: %v", err)
	}
	for _, bad := range []string{"", "../x", "a/b", "job.json"} {
		if err := j.Write(app.JobRecord{JobID: bad}); err == nil {
			t.Errorf("record for %q written", bad)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "jobs")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("jobs directory: %v, %v", fi, err)
	}
}

// One holder of the workspace lock at a time, also across two opens of the directory (two
// executors); the next one gets it once the first lets go, and a waiter gives up with its context.
func TestLockIsExclusive(t *testing.T) {
	dir := t.TempDir()
	a, _ := Open(dir)
	b, _ := Open(dir)
	unlock, err := a.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := b.Lock(ctx); err == nil {
		t.Fatal("a second executor took the workspace while the first held it")
	}
	got := make(chan error, 1)
	go func() {
		u, err := b.Lock(context.Background())
		if err == nil {
			u()
		}
		got <- err
	}()
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the lock was not handed on")
	}
}

func TestPrune(t *testing.T) {
	j, _ := Open(t.TempDir())
	for _, id := range []string{"job_20260101_001", "job_20260101_002"} {
		if err := j.Write(app.JobRecord{JobID: id}); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-8 * 24 * time.Hour)
	if err := os.Chtimes(filepath.Join(j.Dir(), "jobs", "job_20260101_001.json"), old, old); err != nil {
		t.Fatal(err)
	}
	if n, err := j.Prune(7 * 24 * time.Hour); err != nil || n != 1 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	if _, ok, _ := j.Read("job_20260101_002"); !ok {
		t.Fatal("a recent record was pruned")
	}
}
