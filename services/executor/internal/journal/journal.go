// Package journal is what executors sharing one workspace keep next to it, outside the
// workspace (no command a job runs can reach it): the workspace lock, so one executor at a time
// changes the workspace, and a record per job written before the workspace is touched (with what
// the job's paths held) and when the job is done (with its result). An executor that takes over
// a job whose holder stopped reads the record: a job that was done is reported, not applied
// again; one that stopped midway is rolled back first.
package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/executor/internal/app"
)

// Journal keeps its files in one directory.
type Journal struct {
	dir string
	// poll is how often a waiting Lock tries again.
	poll time.Duration
}

var _ app.Journal = (*Journal)(nil)

// Open makes (when missing) and opens the directory dir, owner-only.
func Open(dir string) (*Journal, error) {
	if err := os.MkdirAll(filepath.Join(dir, "jobs"), 0o700); err != nil {
		return nil, fmt.Errorf("journal %s: %w", dir, err)
	}
	return &Journal{dir: dir, poll: 50 * time.Millisecond}, nil
}

// Dir is the journal's directory.
func (j *Journal) Dir() string { return j.dir }

// Lock takes the workspace lock, waiting while another executor (or job of this one) holds it,
// until ctx ends. It is an flock on a file of the directory: the kernel lets it go when its
// holder dies, and it holds across the processes and containers that share the directory's
// file system (a local disk, NFSv4, CephFS).
func (j *Journal) Lock(ctx context.Context) (func(), error) {
	f, err := os.OpenFile(filepath.Join(j.dir, "workspace.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("workspace lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("workspace lock: %w", err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("workspace lock: %w", ctx.Err())
		case <-time.After(j.poll):
		}
	}
}

func (j *Journal) path(jobID string) (string, error) {
	if jobID == "" || strings.ContainsAny(jobID, `/\.`) {
		return "", fmt.Errorf("journal: bad job id %q", jobID)
	}
	return filepath.Join(j.dir, "jobs", jobID+".json"), nil
}

// Write stores r durably: written to a new file, synced, renamed over the old one, the
// directory synced; a crash leaves the old record or the new one, never a part.
func (j *Journal) Write(r app.JobRecord) error {
	p, err := j.path(r.JobID)
	if err != nil {
		return err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".record-*")
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("journal: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("journal: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return syncDir(filepath.Dir(p))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

// Read returns the job's record; false when there is none.
func (j *Journal) Read(jobID string) (app.JobRecord, bool, error) {
	p, err := j.path(jobID)
	if err != nil {
		return app.JobRecord{}, false, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return app.JobRecord{}, false, nil
	}
	if err != nil {
		return app.JobRecord{}, false, fmt.Errorf("journal: %w", err)
	}
	var r app.JobRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return app.JobRecord{}, false, fmt.Errorf("journal: record of %s: %w", jobID, err)
	}
	return r, true, nil
}

// Remove forgets the job's record (its outcome reached approval).
func (j *Journal) Remove(jobID string) error {
	p, err := j.path(jobID)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

// Prune removes records older than age: left behind when their job's outcome reached approval
// but the executor stopped before removing them.
func (j *Journal) Prune(age time.Duration) (int, error) {
	entries, err := os.ReadDir(filepath.Join(j.dir, "jobs"))
	if err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	n := 0
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < age {
			continue
		}
		if err := os.Remove(filepath.Join(j.dir, "jobs", e.Name())); err == nil {
			n++
		}
	}
	return n, nil
}
