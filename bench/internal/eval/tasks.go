// Package eval measures the coders on real tasks: for each provider and each task of a
// fixture repository it runs the suite's real approval, executor and coder-order binaries,
// asks for a proposal, has it approved and executed, then checks the workspace.
package eval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// What a task expects from the coder.
const (
	// ExpectPatch: a change that applies and passes the checks.
	ExpectPatch = "patch"
	// ExpectAnswer: an answer without a patch (review, design).
	ExpectAnswer = "answer"
)

// Task is one eval task: a request to the coder on the fixture, and how its outcome is checked.
// A task lives in tasks/<id>/: task.yaml, optional hidden/ (files added to the workspace after
// the change, before the checks: tests the coder never sees) and, for patch tasks,
// solution.patch (a reference change in one of the suite's patch formats that passes the
// checks; the harness's own tests use it).
type Task struct {
	ID     string `yaml:"-"`
	Kind   string `yaml:"kind"`
	Title  string `yaml:"title"`
	Prompt string `yaml:"prompt"`
	Expect string `yaml:"expect"`
	// Setup edits the fixture before the workspace's first commit (a bug to fix, a broken test).
	Setup  []Edit `yaml:"setup"`
	Checks Checks `yaml:"checks"`
	Hidden []File `yaml:"-"`
	// Solution is the reference change (solution.patch), empty for answer tasks.
	Solution string `yaml:"-"`
}

// Edit replaces the one occurrence of Old in Path with New; an empty Old creates Path.
type Edit struct {
	Path string `yaml:"path"`
	Old  string `yaml:"old"`
	New  string `yaml:"new"`
}

// File is a file's workspace-relative slash path and content.
type File struct {
	Path    string
	Content []byte
}

// Checks say when a task counts as solved. A patch task also needs `go test ./...` to pass in
// the workspace after the change, with the hidden files added.
type Checks struct {
	// Contains: some file matching Files holds the text; Lacks: none does.
	Contains []Match `yaml:"contains"`
	Lacks    []Match `yaml:"lacks"`
	// Unchanged files must be as committed.
	Unchanged []string `yaml:"unchanged"`
	// PathsWithin: every changed path is one of these (a trailing / names a directory).
	PathsWithin []string `yaml:"paths_within"`
	// Mutants are bugs the tests must catch: with each one applied `go test ./...` fails.
	Mutants []Edit `yaml:"mutants"`
	// AnswerMentions: the answer names at least one of these (case-insensitive).
	AnswerMentions []string `yaml:"answer_mentions"`
}

// Match is a literal text or a regular expression looked for in the files matching Files (a
// path.Match pattern on slash paths; "**" is every file).
type Match struct {
	Files  string `yaml:"files"`
	Text   string `yaml:"text"`
	Regexp string `yaml:"regexp"`
	re     *regexp.Regexp
}

func (m Match) String() string {
	if m.re != nil {
		return fmt.Sprintf("%s =~ /%s/", m.Files, m.Regexp)
	}
	return fmt.Sprintf("%s ∋ %q", m.Files, m.Text)
}

// LoadTasks reads every task under dir (one directory each), sorted by id; ids, when given,
// select tasks (an unknown id is an error).
func LoadTasks(dir string, ids ...string) ([]Task, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var tasks []Task
	for _, e := range entries {
		if !e.IsDir() || (len(ids) > 0 && !slices.Contains(ids, e.Name())) {
			continue
		}
		t, err := loadTask(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", e.Name(), err)
		}
		tasks = append(tasks, t)
	}
	for _, id := range ids {
		if !slices.ContainsFunc(tasks, func(t Task) bool { return t.ID == id }) {
			return nil, fmt.Errorf("no task %q in %s", id, dir)
		}
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("no tasks in %s", dir)
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].ID < tasks[j].ID })
	return tasks, nil
}

func loadTask(dir string) (Task, error) {
	t := Task{ID: filepath.Base(dir)}
	data, err := os.ReadFile(filepath.Join(dir, "task.yaml"))
	if err != nil {
		return t, err
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&t); err != nil {
		return t, err
	}
	if sol, err := os.ReadFile(filepath.Join(dir, "solution.patch")); err == nil {
		t.Solution = string(sol)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return t, err
	}
	hidden := filepath.Join(dir, "hidden")
	err = filepath.WalkDir(hidden, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(hidden, p)
		t.Hidden = append(t.Hidden, File{Path: filepath.ToSlash(rel), Content: content})
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return t, err
	}
	return t, t.validate()
}

func (t *Task) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if strings.TrimSpace(t.Prompt) == "" || t.Kind == "" || t.Title == "" {
		bad("kind, title and prompt are required")
	}
	c := &t.Checks
	switch t.Expect {
	case ExpectPatch:
		if t.Solution == "" {
			bad("a patch task needs solution.patch")
		}
		if len(c.AnswerMentions) > 0 {
			bad("answer_mentions is for answer tasks")
		}
	case ExpectAnswer:
		if t.Solution != "" || len(t.Hidden) > 0 || len(c.Mutants)+len(c.Contains)+len(c.Lacks)+len(c.Unchanged)+len(c.PathsWithin) > 0 {
			bad("an answer task has no solution, hidden files or workspace checks")
		}
	default:
		bad("expect must be %s or %s, got %q", ExpectPatch, ExpectAnswer, t.Expect)
	}
	for _, e := range append(slices.Clone(t.Setup), c.Mutants...) {
		if !validPath(e.Path) {
			bad("edit path %q must be a relative slash path", e.Path)
		}
	}
	for _, ms := range [][]Match{c.Contains, c.Lacks} {
		for i := range ms {
			m := &ms[i]
			if _, err := path.Match(m.Files, ""); err != nil || m.Files == "" {
				bad("files %q is not a pattern", m.Files)
			}
			if (m.Text == "") == (m.Regexp == "") {
				bad("%s: exactly one of text and regexp", m.Files)
			}
			if m.Regexp != "" {
				re, err := regexp.Compile(m.Regexp)
				if err != nil {
					bad("%s: %v", m.Files, err)
				}
				m.re = re
			}
		}
	}
	for _, p := range append(slices.Clone(c.Unchanged), c.PathsWithin...) {
		if !validPath(strings.TrimSuffix(p, "/")) {
			bad("path %q must be a relative slash path", p)
		}
	}
	return errors.Join(errs...)
}

func validPath(p string) bool {
	return p != "" && !path.IsAbs(p) && path.Clean(p) == p && !strings.HasPrefix(p, "../") && p != ".."
}
