package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Snapshot is the state of some workspace paths before a job, for rollback.
type Snapshot struct {
	root    *os.Root
	entries []entry
}

type entry struct {
	name    string
	kind    kind
	data    []byte
	mode    fs.FileMode
	link    string
	created []string // ancestor directories that did not exist yet, outermost first
}

type kind int

const (
	kindMissing kind = iota
	kindFile
	kindSymlink
	kindDir
)

// Snapshot records the current state of names (clean workspace paths). Paths that cannot be
// inspected because they leave the workspace are skipped: operations on them are refused.
func (w *Workspace) Snapshot(names []string) (*Snapshot, error) {
	s := &Snapshot{root: w.root}
	for _, n := range names {
		e, err := w.capture(n)
		if err != nil {
			if errors.Is(err, errSkip) {
				continue
			}
			return nil, err
		}
		s.entries = append(s.entries, e)
	}
	return s, nil
}

var errSkip = errors.New("skip")

func (w *Workspace) capture(name string) (entry, error) {
	e := entry{name: name}
	fi, err := w.root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		e.kind = kindMissing
		parts := strings.Split(name, "/")
		for i := 1; i < len(parts); i++ {
			dir := strings.Join(parts[:i], "/")
			if _, err := w.root.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
				e.created = append(e.created, dir)
			} else if err != nil {
				return e, errSkip
			}
		}
		return e, nil
	case err != nil:
		return e, errSkip
	}
	e.mode = fi.Mode().Perm()
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		e.kind = kindSymlink
		if e.link, err = w.root.Readlink(name); err != nil {
			return e, fmt.Errorf("snapshot %s: %w", name, err)
		}
	case fi.IsDir():
		e.kind = kindDir
	case fi.Mode().IsRegular():
		e.kind = kindFile
		if e.data, err = w.root.ReadFile(name); err != nil {
			return e, fmt.Errorf("snapshot %s: %w", name, err)
		}
	default:
		return e, errSkip
	}
	return e, nil
}

// Paths lists the snapshotted paths.
func (s *Snapshot) Paths() []string {
	out := make([]string, len(s.entries))
	for i, e := range s.entries {
		out[i] = e.name
	}
	return out
}

// Restore puts every snapshotted path back byte for byte and returns the paths it changed.
func (s *Snapshot) Restore() ([]string, error) {
	var restored []string
	var errs []error
	for _, e := range s.entries {
		changed, err := s.restore(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("restore %s: %w", e.name, err))
		}
		if changed {
			restored = append(restored, e.name)
		}
	}
	// Directories the job created are removed last, innermost first, only when empty.
	for i := len(s.entries) - 1; i >= 0; i-- {
		c := s.entries[i].created
		for j := len(c) - 1; j >= 0; j-- {
			_ = s.root.Remove(c[j])
		}
	}
	return restored, errors.Join(errs...)
}

func (s *Snapshot) restore(e entry) (bool, error) {
	fi, err := s.root.Lstat(e.name)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	switch e.kind {
	case kindMissing:
		if !exists {
			return false, nil
		}
		return true, s.root.RemoveAll(e.name)
	case kindDir:
		if exists && fi.IsDir() {
			return false, nil
		}
		if exists {
			if err := s.root.RemoveAll(e.name); err != nil {
				return true, err
			}
		}
		return true, s.root.MkdirAll(e.name, e.mode)
	case kindSymlink:
		if exists && fi.Mode()&fs.ModeSymlink != 0 {
			if cur, err := s.root.Readlink(e.name); err == nil && cur == e.link {
				return false, nil
			}
		}
		if err := s.prepare(e.name, exists); err != nil {
			return true, err
		}
		return true, s.root.Symlink(e.link, e.name)
	default:
		if exists && fi.Mode().IsRegular() && fi.Mode().Perm() == e.mode {
			if cur, err := s.root.ReadFile(e.name); err == nil && bytes.Equal(cur, e.data) {
				return false, nil
			}
		}
		if err := s.prepare(e.name, exists); err != nil {
			return true, err
		}
		f, err := s.root.OpenFile(e.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, e.mode)
		if err != nil {
			return true, err
		}
		if _, err := f.Write(e.data); err != nil {
			_ = f.Close()
			return true, err
		}
		if err := f.Close(); err != nil {
			return true, err
		}
		return true, s.root.Chmod(e.name, e.mode)
	}
}

// prepare clears whatever is at name now and makes sure its parent exists.
func (s *Snapshot) prepare(name string, exists bool) error {
	if exists {
		if err := s.root.RemoveAll(name); err != nil {
			return err
		}
	}
	if dir := parent(name); dir != "" {
		return s.root.MkdirAll(dir, 0o755)
	}
	return nil
}
