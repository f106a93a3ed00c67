package eval

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

const (
	testTasks   = "../../testdata/eval/tasks"
	testFixture = "../../testdata/eval/fixture"
)

func loadTestTasks(t *testing.T, ids ...string) []Task {
	t.Helper()
	tasks, err := LoadTasks(testTasks, ids...)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// TestTaskSet: the set has the kinds of work the eval is about, each task well formed.
func TestTaskSet(t *testing.T) {
	tasks := loadTestTasks(t)
	if len(tasks) < 10 {
		t.Errorf("%d tasks, want at least 10", len(tasks))
	}
	kinds := map[string]int{}
	for _, task := range tasks {
		kinds[task.Kind]++
	}
	for _, k := range []string{"bugfix", "failing-test", "build", "rename", "test", "docs", "feature", "refactor", "review", "design"} {
		if kinds[k] == 0 {
			t.Errorf("no %s task (kinds %v)", k, kinds)
		}
	}
	if _, err := LoadTasks(testTasks, "no-such-task"); err == nil {
		t.Error("an unknown task id loads")
	}
}

// TestReferenceSolutions proves each task measures something: on the fixture as set up, its
// checks fail; after its reference change they all pass.
func TestReferenceSolutions(t *testing.T) {
	ctx := context.Background()
	for _, task := range loadTestTasks(t) {
		t.Run(task.ID, func(t *testing.T) {
			if task.Expect == ExpectAnswer {
				checkAnswerTask(t, task)
				return
			}
			before := filepath.Join(t.TempDir(), "ws")
			if err := Prepare(ctx, testFixture, task, before); err != nil {
				t.Fatal(err)
			}
			checks, err := CheckWorkspace(ctx, before, task)
			if err != nil {
				t.Fatal(err)
			}
			if allOK(checks) {
				t.Errorf("the checks pass without any change: %+v", checks)
			}

			after := filepath.Join(t.TempDir(), "ws")
			if err := Prepare(ctx, testFixture, task, after); err != nil {
				t.Fatal(err)
			}
			applySolution(t, after, task.Solution)
			checks, err = CheckWorkspace(ctx, after, task)
			if err != nil {
				t.Fatal(err)
			}
			if !allOK(checks) {
				t.Errorf("the reference solution fails: %+v", checks)
			}
		})
	}
}

// applySolution applies a reference change: the suite's patch parser must read it as file
// edits, nothing left unknown; a diff is applied with git, whole-file edits are written.
func applySolution(t *testing.T, dir, text string) {
	t.Helper()
	p, err := patch.Parse(text, patch.Options{})
	if err != nil {
		t.Fatalf("solution.patch: %v", err)
	}
	if len(p.Operations) == 0 || len(p.Unknown) > 0 {
		t.Fatalf("solution.patch (%s): %d operations, unknown %v", p.Format, len(p.Operations), p.Unknown)
	}
	if p.Format == patch.FormatDiff {
		apply := exec.Command("git", "apply", "-")
		apply.Dir, apply.Stdin = dir, strings.NewReader(text)
		if out, err := apply.CombinedOutput(); err != nil {
			t.Fatalf("git apply solution.patch: %v\n%s", err, out)
		}
		return
	}
	for _, op := range p.Operations {
		if op.Type != patch.TypeFileEdit || (op.Action != patch.ActionCreate && op.Action != patch.ActionUpdate) {
			t.Fatalf("solution operation %s %s %s: only whole-file creates and updates here", op.Type, op.Action, op.Target)
		}
		target := filepath.Join(dir, filepath.FromSlash(op.Target))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, []byte(op.Content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func checkAnswerTask(t *testing.T, task Task) {
	t.Helper()
	if allOK(CheckAnswerText(task, "")) {
		t.Error("an empty answer passes")
	}
	if allOK(CheckAnswerText(task, "Looks fine to me.")) {
		t.Error("an answer without findings passes")
	}
	kw := task.Checks.AnswerMentions[0]
	if checks := CheckAnswerText(task, "The change is wrong: "+strings.ToUpper(kw)+"."); !allOK(checks) {
		t.Errorf("an answer naming %q fails: %+v", kw, checks)
	}
}

func allOK(checks []CheckResult) bool {
	return len(checks) > 0 && !slices.ContainsFunc(checks, func(c CheckResult) bool { return !c.OK })
}

func TestCheckMutantsAndPaths(t *testing.T) {
	ctx := context.Background()
	task := loadTestTasks(t, "add-test-clamp")[0]
	ws := filepath.Join(t.TempDir(), "ws")
	if err := Prepare(ctx, testFixture, task, ws); err != nil {
		t.Fatal(err)
	}
	// A test that runs Clamp but checks nothing lets the mutants survive; an edit outside the
	// allowed paths is named.
	for _, e := range []Edit{
		{Path: "calc/clamp_test.go", New: "package calc\n\nimport \"testing\"\n\nfunc TestClamp(t *testing.T) { _ = Clamp(1, 0, 2) }\n"},
		{Path: "README.md", Old: "# calc\n", New: "# calc!\n"},
	} {
		if _, err := applyEdit(ws, e); err != nil {
			t.Fatal(err)
		}
	}
	checks, err := CheckWorkspace(ctx, ws, task)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]CheckResult{}
	for _, c := range checks {
		got[c.Name] = c
	}
	if c := got[CheckGoTest]; !c.OK {
		t.Errorf("go test: %+v", c)
	}
	if c := got[CheckMutants]; c.OK || !strings.Contains(c.Detail, "0 of 2 caught") {
		t.Errorf("mutants: %+v", c)
	}
	if c := got[CheckPathsWithin]; c.OK || !strings.Contains(c.Detail, "README.md") {
		t.Errorf("paths_within: %+v", c)
	}
	if c := got[CheckUnchanged]; !c.OK {
		t.Errorf("unchanged: %+v", c)
	}
}
