package eval

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Prepare makes dst a fresh workspace for t: a copy of the fixture with the task's setup edits,
// committed as the first commit of a new git repository.
func Prepare(ctx context.Context, fixture string, t Task, dst string) error {
	if err := copyTree(fixture, dst); err != nil {
		return fmt.Errorf("copy fixture: %w", err)
	}
	for _, e := range t.Setup {
		if _, err := applyEdit(dst, e); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=PicoClaw Eval", "-c", "user.email=eval@picoclaw.invalid", "-c", "commit.gpgsign=false",
			"commit", "-q", "--no-verify", "-m", "eval fixture: " + t.ID},
	} {
		if _, err := git(ctx, dst, args...); err != nil {
			return err
		}
	}
	return nil
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: only regular files belong in the fixture", rel)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// applyEdit makes e in the tree at root and returns the file's previous content (nil when the
// edit created it).
func applyEdit(root string, e Edit) ([]byte, error) {
	p := filepath.Join(root, filepath.FromSlash(e.Path))
	before, err := os.ReadFile(p)
	switch {
	case e.Old == "" && os.IsNotExist(err):
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		return nil, os.WriteFile(p, []byte(e.New), 0o644)
	case err != nil:
		return nil, err
	case e.Old == "":
		return nil, fmt.Errorf("%s exists: an edit without old text creates a file", e.Path)
	}
	if n := bytes.Count(before, []byte(e.Old)); n != 1 {
		return nil, fmt.Errorf("%s: the text to replace occurs %d times, want once: %q", e.Path, n, e.Old)
	}
	return before, os.WriteFile(p, bytes.Replace(before, []byte(e.Old), []byte(e.New), 1), 0o644)
}

// git runs git in dir with no user or system configuration, and returns its output.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// changedPaths lists the workspace's changes against its commit: modified, added, deleted and
// untracked files, as slash paths.
func changedPaths(ctx context.Context, dir string) ([]string, error) {
	out, err := git(ctx, dir, "status", "--porcelain=v1", "-z", "-uall", "--no-renames")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, rec := range strings.Split(string(out), "\x00") {
		if len(rec) > 3 {
			paths = append(paths, rec[3:])
		}
	}
	return paths, nil
}
