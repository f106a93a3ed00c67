// Package workspace applies file operations inside the executor's workspace through os.Root, so
// no path (including symlinks) can reach outside it, and snapshots paths for rollback.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

// Workspace is an open workspace directory.
type Workspace struct {
	dir  string
	root *os.Root
	// cache keeps file contents for Search, checked against each file's stamp at every use.
	cache *fileCache
}

// Open opens dir (which must exist) as the workspace.
func Open(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	// Resolve symlinks once so shell and git run in the same directory os.Root confines.
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	return &Workspace{dir: real, root: root, cache: &fileCache{}}, nil
}

// Dir is the workspace's resolved absolute path.
func (w *Workspace) Dir() string { return w.dir }

// Close releases the root.
func (w *Workspace) Close() error { return w.root.Close() }

// Store reads and writes files by clean workspace-relative path.
type Store interface {
	// Read returns the content and mode of a regular file; exists is false when nothing is there.
	Read(name string) (data []byte, mode fs.FileMode, exists bool, err error)
	Write(name string, data []byte, mode fs.FileMode) error
	Remove(name string) error
	Rename(from, to string) error
}

// Disk is the Store that writes through the workspace root.
func (w *Workspace) Disk() Store { return disk{root: w.root} }

type disk struct{ root *os.Root }

// noLinks refuses a path that goes through a symlink anywhere: os.Root keeps links from leaving
// the workspace, but a link inside it would still let an approved path (docs/x) write a file the
// approval never named (src/main.go, .git/config).
func (d disk) noLinks(name string) error {
	parts := strings.Split(name, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		fi, err := d.root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return rootErr(name, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if _, serr := d.root.Stat(p); serr != nil && !errors.Is(serr, fs.ErrNotExist) {
				return rootErr(name, serr) // a link out of the workspace says so
			}
			return domain.Fail(domain.ErrPermission, domain.CodeSymlinkInPath, name, p)
		}
	}
	return nil
}

func (d disk) Read(name string) ([]byte, fs.FileMode, bool, error) {
	if err := d.noLinks(name); err != nil {
		return nil, 0, false, err
	}
	fi, err := d.root.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		// A dangling symlink would be created through on write; check it stays inside.
		if _, lerr := d.root.Lstat(name); lerr == nil {
			return nil, 0, false, domain.Fail(domain.ErrPermission, domain.CodeDanglingSymlink, name)
		}
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, rootErr(name, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, false, domain.Fail(domain.ErrInvalid, domain.CodeNotRegularFile, name)
	}
	data, err := d.root.ReadFile(name)
	if err != nil {
		return nil, 0, false, rootErr(name, err)
	}
	return data, fi.Mode().Perm(), true, nil
}

func (d disk) Write(name string, data []byte, mode fs.FileMode) error {
	if err := d.noLinks(name); err != nil {
		return err
	}
	if dir := parent(name); dir != "" {
		if err := d.root.MkdirAll(dir, 0o755); err != nil {
			return rootErr(name, err)
		}
	}
	if mode == 0 {
		mode = 0o644
	}
	// A hard link could share its inode with a file outside the workspace: writing through it
	// would change that file, so such files are refused.
	if fi, err := d.root.Lstat(name); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().IsRegular() && st.Nlink > 1 {
			return domain.Fail(domain.ErrPermission, domain.CodeHardLinks, name, st.Nlink)
		}
	}
	f, err := d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return rootErr(name, err)
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return rootErr(name, err)
	}
	return rootErr(name, f.Close())
}

func (d disk) Remove(name string) error {
	if err := d.noLinks(name); err != nil {
		return err
	}
	fi, err := d.root.Lstat(name)
	if err != nil {
		return rootErr(name, err)
	}
	if fi.IsDir() {
		return domain.Fail(domain.ErrInvalid, domain.CodeIsDirectory, name)
	}
	return rootErr(name, d.root.Remove(name))
}

func (d disk) Rename(from, to string) error {
	for _, name := range []string{from, to} {
		if err := d.noLinks(name); err != nil {
			return err
		}
	}
	if _, err := d.root.Lstat(from); err != nil {
		return rootErr(from, err)
	}
	if _, err := d.root.Lstat(to); err == nil {
		return domain.Fail(domain.ErrConflict, domain.CodeRenameExists, to)
	}
	if dir := parent(to); dir != "" {
		if err := d.root.MkdirAll(dir, 0o755); err != nil {
			return rootErr(to, err)
		}
	}
	return rootErr(from, d.root.Rename(from, to))
}

// rootErr turns os.Root's escape refusals into ErrPermission so they read as policy, not I/O.
func rootErr(name string, err error) error {
	if err == nil {
		return nil
	}
	if strings.Contains(err.Error(), "escapes from parent") || strings.Contains(err.Error(), "path escapes") {
		return domain.Fail(domain.ErrPermission, domain.CodeLeavesWorkspace, name)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return domain.Fail(domain.ErrNotFound, domain.CodeFileMissing, name)
	}
	return domain.FailWith(nil, err, domain.CodeFileIO, name)
}

func parent(name string) string {
	if i := strings.LastIndexByte(name, '/'); i > 0 {
		return name[:i]
	}
	return ""
}

// Overlay is a Store that reads through to base and keeps every change in memory: a dry run
// sees the effect of earlier operations without touching the disk.
type Overlay struct {
	base    Store
	changed map[string]*overlayFile
}

type overlayFile struct {
	data    []byte
	mode    fs.FileMode
	deleted bool
}

// NewOverlay returns an in-memory overlay over base.
func NewOverlay(base Store) *Overlay {
	return &Overlay{base: base, changed: map[string]*overlayFile{}}
}

func (o *Overlay) Read(name string) ([]byte, fs.FileMode, bool, error) {
	if f, ok := o.changed[name]; ok {
		if f.deleted {
			return nil, 0, false, nil
		}
		return f.data, f.mode, true, nil
	}
	return o.base.Read(name)
}

func (o *Overlay) Write(name string, data []byte, mode fs.FileMode) error {
	// Resolve through the base so escapes are refused exactly as a real write would be.
	if _, _, _, err := o.base.Read(name); err != nil {
		return err
	}
	if mode == 0 {
		mode = 0o644
	}
	o.changed[name] = &overlayFile{data: append([]byte(nil), data...), mode: mode}
	return nil
}

func (o *Overlay) Remove(name string) error {
	if _, _, ok, err := o.Read(name); err != nil {
		return err
	} else if !ok {
		return domain.Fail(domain.ErrNotFound, domain.CodeFileMissing, name)
	}
	o.changed[name] = &overlayFile{deleted: true}
	return nil
}

func (o *Overlay) Rename(from, to string) error {
	data, mode, ok, err := o.Read(from)
	if err != nil {
		return err
	}
	if !ok {
		return domain.Fail(domain.ErrNotFound, domain.CodeFileMissing, from)
	}
	if _, _, exists, err := o.Read(to); err != nil {
		return err
	} else if exists {
		return domain.Fail(domain.ErrConflict, domain.CodeRenameExists, to)
	}
	o.changed[to] = &overlayFile{data: data, mode: mode}
	o.changed[from] = &overlayFile{deleted: true}
	return nil
}

// IsRepository reports whether the workspace root is a git work tree (has a .git entry).
func (w *Workspace) IsRepository() bool {
	_, err := w.root.Lstat(".git")
	return err == nil
}
