package eval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// CheckResult is one check of a task's outcome.
type CheckResult struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// Names of the checks.
const (
	CheckGoTest      = "go_test"
	CheckContains    = "contains"
	CheckLacks       = "lacks"
	CheckUnchanged   = "unchanged"
	CheckPathsWithin = "paths_within"
	CheckMutants     = "mutants"
	CheckAnswer      = "answer"
	CheckMentions    = "answer_mentions"
)

// testTimeout bounds one `go test ./...` of the workspace.
const testTimeout = 3 * time.Minute

// CheckWorkspace checks the workspace dir after the change of patch task t was applied: the file checks on the
// change itself, then the hidden files are added and the tests run (and, when they pass, once
// more with each mutant, which they must catch).
func CheckWorkspace(ctx context.Context, dir string, t Task) ([]CheckResult, error) {
	c := t.Checks
	changed, err := changedPaths(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out []CheckResult
	for _, p := range c.Unchanged {
		out = append(out, CheckResult{Name: CheckUnchanged, OK: !slices.Contains(changed, p), Detail: p})
	}
	if len(c.PathsWithin) > 0 {
		var outside []string
		for _, p := range changed {
			if !within(p, c.PathsWithin) {
				outside = append(outside, p)
			}
		}
		out = append(out, CheckResult{Name: CheckPathsWithin, OK: len(outside) == 0, Detail: detail(outside, "changed outside "+strings.Join(c.PathsWithin, ", "))})
	}
	files, err := workspaceFiles(dir)
	if err != nil {
		return nil, err
	}
	for _, m := range c.Contains {
		hits := m.find(dir, files)
		out = append(out, CheckResult{Name: CheckContains, OK: len(hits) > 0, Detail: m.String()})
	}
	for _, m := range c.Lacks {
		hits := m.find(dir, files)
		out = append(out, CheckResult{Name: CheckLacks, OK: len(hits) == 0, Detail: m.String() + detail(hits, "found in")})
	}
	for _, f := range t.Hidden {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, f.Content, 0o644); err != nil {
			return nil, err
		}
	}
	ok, log := GoTest(ctx, dir)
	res := CheckResult{Name: CheckGoTest, OK: ok}
	if !ok {
		res.Detail = log
	}
	out = append(out, res)
	if len(c.Mutants) > 0 {
		out = append(out, checkMutants(ctx, dir, c.Mutants, ok))
	}
	return out, nil
}

// checkMutants applies each mutant in turn; the tests must fail with every one.
func checkMutants(ctx context.Context, dir string, mutants []Edit, testsPass bool) CheckResult {
	if !testsPass {
		return CheckResult{Name: CheckMutants, Detail: "not run: the tests fail without mutants"}
	}
	var survived []string
	for i, m := range mutants {
		before, err := applyEdit(dir, m)
		if err != nil {
			survived = append(survived, fmt.Sprintf("#%d cannot be applied (%v)", i+1, err))
			continue
		}
		killed, _ := GoTest(ctx, dir)
		if killed = !killed; !killed {
			survived = append(survived, fmt.Sprintf("#%d survived (%s)", i+1, m.Path))
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(m.Path)), before, 0o644); err != nil {
			survived = append(survived, err.Error())
		}
	}
	return CheckResult{Name: CheckMutants, OK: len(survived) == 0,
		Detail: fmt.Sprintf("%d of %d caught", len(mutants)-len(survived), len(mutants)) + detail(survived, ";")}
}

// CheckAnswerText checks an answer without a patch.
func CheckAnswerText(t Task, answer string) []CheckResult {
	out := []CheckResult{{Name: CheckAnswer, OK: strings.TrimSpace(answer) != ""}}
	if len(t.Checks.AnswerMentions) > 0 {
		lower := strings.ToLower(answer)
		var named []string
		for _, k := range t.Checks.AnswerMentions {
			if strings.Contains(lower, strings.ToLower(k)) {
				named = append(named, k)
			}
		}
		res := CheckResult{Name: CheckMentions, OK: len(named) > 0, Detail: "names " + strings.Join(named, ", ")}
		if len(named) == 0 {
			res.Detail = "names none of " + strings.Join(t.Checks.AnswerMentions, ", ")
		}
		out = append(out, res)
	}
	return out
}

func within(p string, allowed []string) bool {
	for _, a := range allowed {
		if p == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(p, a)) {
			return true
		}
	}
	return false
}

func detail(items []string, label string) string {
	if len(items) == 0 {
		return ""
	}
	return " " + label + " " + strings.Join(items, ", ")
}

// workspaceFiles lists the workspace's files (slash paths), without .git.
func workspaceFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, err
}

// find returns the files matching m.Files that hold m's text.
func (m Match) find(dir string, files []string) []string {
	var hits []string
	for _, f := range files {
		if ok, _ := path.Match(m.Files, f); !ok && m.Files != "**" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			continue
		}
		if (m.re != nil && m.re.Match(data)) || (m.re == nil && bytes.Contains(data, []byte(m.Text))) {
			hits = append(hits, f)
		}
	}
	return hits
}

// GoTest runs `go test ./...` in dir and returns whether it passed and the end of its output.
// The code under test was written by a model: it runs with a minimal environment (no API keys
// or service credentials), without network access for modules (GOPROXY=off), in its own process
// group, killed after testTimeout.
func GoTest(ctx context.Context, dir string) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "./...")
	cmd.Dir = dir
	cmd.Env = testEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		out = append(out, fmt.Sprintf("\n(killed after %s)", testTimeout)...)
	}
	return err == nil, tail(string(out), 2000)
}

// testEnv is the environment of the workspace's tests: the toolchain's own variables and no
// others; without a home directory the caches go to the temporary directory.
func testEnv() []string {
	env := []string{"GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0"}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "XDG_CACHE_HOME", "GOROOT", "GOPATH", "GOCACHE", "GOMODCACHE"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if os.Getenv("HOME") == "" {
		tmp := filepath.Join(os.TempDir(), "picoclaw-eval-go")
		if os.Getenv("GOCACHE") == "" && os.Getenv("XDG_CACHE_HOME") == "" {
			env = append(env, "GOCACHE="+filepath.Join(tmp, "cache"))
		}
		if os.Getenv("GOPATH") == "" {
			env = append(env, "GOPATH="+filepath.Join(tmp, "path"))
		}
	}
	return env
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
