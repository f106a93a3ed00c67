package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/redact"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/proc"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/workspace"
)

// View is the read-only view of the workspace offered to the coders and the worker. Every
// read is logged (executor.workspace_read, with the job_id of the call); files holding secrets
// are never returned.
type View struct {
	ws     *workspace.Workspace
	runner *Runner
	log    *slog.Logger
}

// NewView returns the view over the runner's workspace; git runs through the runner (in the
// sandbox, configuration checked).
func NewView(r *Runner, log *slog.Logger) *View {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &View{ws: r.cfg.Workspace, runner: r, log: log}
}

func (v *View) logged(ctx context.Context, op, target string, err error, attrs ...slog.Attr) {
	attrs = append(attrs, slog.String("op", op), slog.String("path", target))
	if err != nil {
		attrs = append(attrs, slog.String("refused", err.Error()))
		v.log.LogAttrs(ctx, slog.LevelWarn, "executor.workspace_read", attrs...)
		return
	}
	v.log.LogAttrs(ctx, slog.LevelInfo, "executor.workspace_read", attrs...)
}

// ListTree lists the tree.
func (v *View) ListTree(ctx context.Context, o workspace.TreeOptions) (workspace.Tree, error) {
	t, err := v.ws.ListTree(o)
	attrs := []slog.Attr{slog.Int("entries", len(t.Entries)), slog.Int("withheld", t.Withheld)}
	if o.Search != nil && t.Search != nil {
		attrs = append(attrs, slog.String("query", redact.Secrets(o.Search.Query)), slog.Int("matches", len(t.Search.Matches)))
	}
	v.logged(ctx, "list_tree", o.Dir, err, attrs...)
	return t, err
}

// ReadFile reads one file.
func (v *View) ReadFile(ctx context.Context, name string, o workspace.ReadOptions) (workspace.File, error) {
	f, err := v.ws.ReadFile(name, o)
	v.logged(ctx, "read_file", name, err, slog.Int64("bytes", int64(len(f.Content))))
	return f, err
}

// Search searches the tree.
func (v *View) Search(ctx context.Context, o workspace.SearchOptions) (workspace.SearchResult, error) {
	r, err := v.ws.Search(o)
	v.logged(ctx, "search", o.Dir, err, slog.String("query", redact.Secrets(o.Query)), slog.Int("matches", len(r.Matches)))
	return r, err
}

// StatusEntry is one line of git status.
type StatusEntry struct{ Path, Status string }

// Status is git status.
type Status struct {
	Branch        string
	Entries       []StatusEntry
	NotRepository bool
}

// Commit is one commit of git log.
type Commit struct{ Hash, Author, Date, Subject string }

// FileStat is one file of the diff summary.
type FileStat struct {
	Path                 string
	Additions, Deletions int
	Binary               bool
}

// Remote is one git remote.
type Remote struct{ Name, URL string }

// gitRead runs a read-only git command: the configuration guard as for every git command,
// .git mounted read-only and no optional locks.
func (v *View) gitRead(ctx context.Context, args ...string) (string, error) {
	r := v.runner
	list, err := r.runGit(ctx, false, nil, gitConfigLimit, "config", "-z", "--list")
	if err != nil {
		return "", fmt.Errorf("%w: the repository configuration cannot be read: %v", domain.ErrUnavailable, err)
	}
	if list.Truncated {
		return "", fmt.Errorf("%w: the repository configuration is larger than %d bytes", domain.ErrPermission, gitConfigLimit)
	}
	extra, err := domain.GitConfigGuard(list.Text)
	if err != nil {
		return "", err
	}
	out, err := r.runGit(ctx, false, extra, r.cfg.OutputLimit, append([]string{"--no-optional-locks"}, args...)...)
	if err != nil {
		if out.ExitReason == proc.ExitNoSandbox {
			return "", fmt.Errorf("%w: git: %v", domain.ErrUnavailable, err)
		}
		return "", fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(out.Text))
	}
	return out.Text, nil
}

// GitStatus is git status of the workspace.
func (v *View) GitStatus(ctx context.Context) (Status, error) {
	if !v.ws.IsRepository() {
		v.logged(ctx, "git_status", "", nil, slog.Bool("not_a_repository", true))
		return Status{NotRepository: true}, nil
	}
	text, err := v.gitRead(ctx, "status", "--porcelain=v1", "-z", "--branch", "--untracked-files=all")
	v.logged(ctx, "git_status", "", err)
	if err != nil {
		return Status{}, err
	}
	return parseStatus(text), nil
}

func parseStatus(text string) Status {
	var st Status
	fields := strings.Split(text, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 3 {
			continue
		}
		if strings.HasPrefix(f, "## ") {
			b := strings.TrimPrefix(f, "## ")
			if j := strings.Index(b, "..."); j >= 0 {
				b = b[:j]
			}
			st.Branch = strings.TrimPrefix(b, "No commits yet on ")
			continue
		}
		code, p := f[:2], f[3:]
		if code[0] == 'R' || code[0] == 'C' {
			i++ // the source path follows
		}
		if domain.IsSecretPath(p) {
			continue
		}
		st.Entries = append(st.Entries, StatusEntry{Path: p, Status: code})
	}
	return st
}

// GitLog lists up to max commits (touching path when set).
func (v *View) GitLog(ctx context.Context, max int, path string) ([]Commit, bool, error) {
	if !v.ws.IsRepository() {
		v.logged(ctx, "git_log", path, nil, slog.Bool("not_a_repository", true))
		return nil, true, nil
	}
	if max <= 0 || max > 200 {
		max = 20
	}
	args := []string{"log", "-n", strconv.Itoa(max), "--format=%H%x1f%an%x1f%aI%x1f%s%x1e"}
	if path != "" {
		p, err := domain.CleanPath(path)
		if err != nil {
			v.logged(ctx, "git_log", path, err)
			return nil, false, err
		}
		args = append(args, "--", p)
	}
	text, err := v.gitRead(ctx, args...)
	v.logged(ctx, "git_log", path, err)
	if err != nil {
		if strings.Contains(err.Error(), "does not have any commits") {
			return nil, false, nil
		}
		return nil, false, err
	}
	var out []Commit
	for _, rec := range strings.Split(text, "\x1e") {
		f := strings.Split(strings.TrimSpace(rec), "\x1f")
		if len(f) != 4 {
			continue
		}
		out = append(out, Commit{Hash: f[0], Author: f[1], Date: f[2], Subject: redact.Secrets(f[3])})
	}
	return out, false, nil
}

// DiffSummary counts the uncommitted changes per file (against HEAD, or the index in a
// repository without commits).
func (v *View) DiffSummary(ctx context.Context) ([]FileStat, bool, error) {
	if !v.ws.IsRepository() {
		v.logged(ctx, "diff_summary", "", nil, slog.Bool("not_a_repository", true))
		return nil, true, nil
	}
	text, err := v.gitRead(ctx, "diff", "--numstat", "HEAD")
	if err != nil {
		text, err = v.gitRead(ctx, "diff", "--numstat")
	}
	v.logged(ctx, "diff_summary", "", err)
	if err != nil {
		return nil, false, err
	}
	var out []FileStat
	for _, line := range strings.Split(text, "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 || domain.IsSecretPath(f[2]) {
			continue
		}
		s := FileStat{Path: f[2]}
		if f[0] == "-" {
			s.Binary = true
		} else {
			s.Additions, _ = strconv.Atoi(f[0])
			s.Deletions, _ = strconv.Atoi(f[1])
		}
		out = append(out, s)
	}
	return out, false, nil
}

// Remotes lists the remotes with any credentials in their URLs removed.
func (v *View) Remotes(ctx context.Context) ([]Remote, bool, error) {
	if !v.ws.IsRepository() {
		v.logged(ctx, "remotes", "", nil, slog.Bool("not_a_repository", true))
		return nil, true, nil
	}
	text, err := v.gitRead(ctx, "remote", "-v")
	v.logged(ctx, "remotes", "", err)
	if err != nil {
		return nil, false, err
	}
	var out []Remote
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || seen[f[0]] {
			continue
		}
		seen[f[0]] = true
		out = append(out, Remote{Name: f[0], URL: stripCredentials(f[1])})
	}
	return out, false, nil
}

// stripCredentials removes user:password from a URL remote (scp-style remotes carry only a user).
func stripCredentials(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.User == nil {
		return redact.Secrets(raw)
	}
	u.User = nil
	return u.String()
}
