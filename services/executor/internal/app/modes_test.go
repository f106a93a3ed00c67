package app

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

func TestContinueVersusStopOnError(t *testing.T) {
	list := ops(
		fileOp(patch.ActionCreate, "one.txt", "1\n"),
		shellOp("exit 7"),
		fileOp(patch.ActionCreate, "three.txt", "3\n"),
	)
	tests := []struct {
		name        string
		stop        bool
		wantThree   bool
		wantSkipped int
	}{
		{"continue (default)", false, true, 0},
		{"stop on error", true, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			res := f.runner.Run(context.Background(), "job_20260101_002", list, Modes{StopOnError: tt.stop})
			if res.Success || res.Failed != 1 || res.Skipped != tt.wantSkipped {
				t.Fatalf("result = %+v", res)
			}
			if !strings.Contains(res.Commands[1].Error, "exit status 7") {
				t.Fatalf("error = %q", res.Commands[1].Error)
			}
			_, err := os.Stat(filepath.Join(f.ws, "three.txt"))
			if got := err == nil; got != tt.wantThree {
				t.Fatalf("three.txt exists = %v, want %v", got, tt.wantThree)
			}
			if _, err := os.Stat(filepath.Join(f.ws, "one.txt")); err != nil {
				t.Fatal("first command did not run")
			}
		})
	}
}

func TestRollbackRestoresByteForByte(t *testing.T) {
	f := newFixture(t, nil)
	original := "line 1\r\nbinary \x00\xff\n"
	writeFile(t, filepath.Join(f.ws, "keep.txt"), original)
	if err := os.Chmod(filepath.Join(f.ws, "keep.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.ws, "gone.txt"), "to be deleted\n")
	before := tree(t, f.ws, "")
	list := ops(
		fileOp(patch.ActionUpdate, "keep.txt", "overwritten"),
		fileOp(patch.ActionCreate, "new/dir/made.txt", "new"),
		fileOp(patch.ActionDelete, "gone.txt", ""),
		shellOp("echo failing; exit 1"),
	)
	res := f.runner.Run(context.Background(), "job_20260101_003", list, Modes{RollbackOnFailure: true})
	if res.Success || !res.RolledBack || res.RollbackError != "" {
		t.Fatalf("result = %+v", res)
	}
	if got := tree(t, f.ws, ""); !equalTrees(before, got) {
		t.Fatalf("workspace not restored:\nbefore %v\nafter  %v", before, got)
	}
	if got := readFile(t, filepath.Join(f.ws, "keep.txt")); got != original {
		t.Fatalf("keep.txt = %q", got)
	}
	want := []string{"gone.txt", "keep.txt", "new/dir/made.txt"}
	if !slices.Equal(res.RestoredPaths, want) {
		t.Fatalf("restored = %v, want %v", res.RestoredPaths, want)
	}
	if !strings.Contains(res.Text("ja"), "ロールバック済み: gone.txt, keep.txt, new/dir/made.txt") {
		t.Fatalf("text = %s", res.Text("ja"))
	}
	if !slices.Contains(events(f.logs), "executor.rollback") {
		t.Fatalf("no rollback event: %v", events(f.logs))
	}
}

func TestRollbackFailingThirdCommand(t *testing.T) {
	f := newFixture(t, nil)
	writeFile(t, filepath.Join(f.ws, "a.txt"), "alpha\n")
	writeFile(t, filepath.Join(f.ws, "b.txt"), "beta\n")
	list := ops(
		fileOp(patch.ActionUpdate, "a.txt", "changed a\n"),
		fileOp(patch.ActionAppend, "b.txt", "more b\n"),
		diffOp("a.txt", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-not there\n+x\n"),
	)
	res := f.runner.Run(context.Background(), "job_20260101_004", list, Modes{RollbackOnFailure: true})
	if res.Success || res.Succeeded != 2 || !res.RolledBack {
		t.Fatalf("result = %+v", res)
	}
	if a, b := readFile(t, filepath.Join(f.ws, "a.txt")), readFile(t, filepath.Join(f.ws, "b.txt")); a != "alpha\n" || b != "beta\n" {
		t.Fatalf("a=%q b=%q", a, b)
	}
	if !slices.Equal(res.RestoredPaths, []string{"a.txt", "b.txt"}) {
		t.Fatalf("restored = %v", res.RestoredPaths)
	}
}

func TestNoRollbackWhenDisabled(t *testing.T) {
	f := newFixture(t, nil)
	res := f.runner.Run(context.Background(), "job_20260101_005", ops(
		fileOp(patch.ActionCreate, "stays.txt", "x"), shellOp("false")), Modes{})
	if res.Success || res.RolledBack {
		t.Fatalf("result = %+v", res)
	}
	if readFile(t, filepath.Join(f.ws, "stays.txt")) != "x" {
		t.Fatal("file removed without rollback")
	}
}

func TestDryRunTouchesNothing(t *testing.T) {
	f := newFixture(t, nil)
	writeFile(t, filepath.Join(f.ws, "a.txt"), "one\ntwo\n")
	before := tree(t, f.parent, "")
	list := ops(
		fileOp(patch.ActionCreate, "b.txt", "hello\n"),
		// Sees b.txt from the step before, though nothing was written.
		diffOp("b.txt", "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-hello\n+world\n"),
		diffOp("a.txt", "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n"),
		renameOp("a.txt", "c.txt"),
		shellOp("touch shell-ran.txt"),
		gitOp(patch.ActionGitCommit, "", "msg", nil),
		fileOp(patch.ActionCreate, "../escape.txt", "x"),
	)
	res := f.runner.Run(context.Background(), "", list, Modes{DryRun: true, RollbackOnFailure: true, AutoCommit: true})
	if !res.DryRun || res.Succeeded != 6 || res.Failed != 1 {
		t.Fatalf("result = %+v", res)
	}
	if got := tree(t, f.parent, ""); !equalTrees(before, got) {
		t.Fatal("dry run changed files")
	}
	for _, want := range []string{"would have created b.txt", "would have patched b.txt", "would run: bash -c touch shell-ran.txt", "would run: git commit -m msg"} {
		found := false
		for _, c := range res.Commands {
			found = found || strings.Contains(c.Output, want)
		}
		if !found {
			t.Errorf("no %q in %+v", want, res.Commands)
		}
	}
	if !strings.HasPrefix(res.Text("ja"), "ドライラン") || res.CommitHash != "" {
		t.Fatalf("text = %s", res.Text("ja"))
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestAutoCommit(t *testing.T) {
	f := newFixture(t, nil)
	gitInit(t, f.ws)
	list := ops(
		fileOp(patch.ActionCreate, "docs/readme.md", "# hello\n"),
		shellOp("echo generated > gen.txt"),
	)
	res := f.runner.Run(context.Background(), "job_20260101_006", list, Modes{AutoCommit: true, CommitPrefix: "[Worker Auto-Commit]", RollbackOnFailure: true})
	if !res.Success || res.CommitError != "" || len(res.CommitHash) != 40 {
		t.Fatalf("result = %+v", res)
	}
	if head := gitOut(t, f.ws, "rev-parse", "HEAD"); head != res.CommitHash {
		t.Fatalf("HEAD %s, reported %s", head, res.CommitHash)
	}
	if subj := gitOut(t, f.ws, "log", "-1", "--format=%s"); subj != "[Worker Auto-Commit] job_20260101_006" {
		t.Fatalf("subject = %q", subj)
	}
	if files := gitOut(t, f.ws, "show", "--name-only", "--format=", "HEAD"); files != "docs/readme.md\ngen.txt" {
		t.Fatalf("committed files = %q", files)
	}
	if status := gitOut(t, f.ws, "status", "--porcelain"); status != "" {
		t.Fatalf("status = %q", status)
	}
	if !strings.Contains(res.Text("en"), "Git commit: "+res.CommitHash) || !slices.Contains(events(f.logs), "worker.auto_commit_success") {
		t.Fatalf("text = %s, events %v", res.Text("en"), events(f.logs))
	}

	// Nothing changed: no commit, no error.
	res = f.runner.Run(context.Background(), "job_20260101_007", ops(shellOp("true")), Modes{AutoCommit: true})
	if res.CommitHash != "" || res.CommitError != "" {
		t.Fatalf("empty commit: %+v", res)
	}
}

func TestAutoCommitOutsideRepositoryFailsVisibly(t *testing.T) {
	f := newFixture(t, nil)
	res := f.runner.Run(context.Background(), "job_20260101_008", ops(fileOp(patch.ActionCreate, "a.txt", "a")), Modes{AutoCommit: true})
	if !res.Success || res.CommitHash != "" || !strings.Contains(res.CommitError, "not a git repository") {
		t.Fatalf("result = %+v", res)
	}
	if !strings.Contains(res.Text("ja"), "自動コミットに失敗しました") || !slices.Contains(events(f.logs), "worker.auto_commit_failed") {
		t.Fatalf("text = %s", res.Text("ja"))
	}
}

func TestGitOperations(t *testing.T) {
	f := newFixture(t, nil)
	gitInit(t, f.ws)
	list := ops(
		fileOp(patch.ActionCreate, "a.txt", "a\n"),
		gitOp(patch.ActionGitAdd, "a.txt", "", nil),
		gitOp(patch.ActionGitCommit, "", "add a", nil),
		gitOp(patch.ActionGitCheckout, "", "", map[string]string{"branch": "main"}),
		fileOp(patch.ActionUpdate, "a.txt", "changed\n"),
		gitOp(patch.ActionGitCheckout, "a.txt", "", nil),
		gitOp(patch.ActionGitReset, "", "", map[string]string{"mode": "soft", "ref": "HEAD~1"}),
		gitOp(patch.ActionGitPush, "https://nowhere.invalid/repo.git", "", map[string]string{"branch": "main"}),
	)
	res := f.runner.Run(context.Background(), "job_20260101_009", list, Modes{})
	for i, c := range res.Commands[:7] {
		if !c.Success {
			t.Fatalf("command %d failed: %+v", i, c)
		}
	}
	if readFile(t, filepath.Join(f.ws, "a.txt")) != "a\n" {
		t.Fatal("checkout did not restore a.txt")
	}
	if subj := gitOut(t, f.ws, "log", "-1", "--format=%s"); subj != "init" {
		t.Fatalf("after soft reset HEAD is %q", subj)
	}
	if push := res.Commands[7]; push.Success || !strings.Contains(push.Output, "nowhere") {
		t.Fatalf("push to a missing remote: %+v", push)
	}
}

func TestShellEnvironmentIsScrubbed(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-should-not-leak")
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-should-not-leak")
	t.Setenv("PICOCLAW_POSTGRES_DSN", "postgres://secret")
	f := newFixture(t, nil)
	res := f.runner.Run(context.Background(), "job_20260101_010", ops(shellOp("env")), Modes{})
	if !res.Success {
		t.Fatalf("result = %+v", res)
	}
	allowed := map[string]bool{"PATH": true, "HOME": true, "LANG": true}
	// bash itself sets these for every shell.
	shellOwn := map[string]bool{"PWD": true, "SHLVL": true, "_": true, "OLDPWD": true}
	for _, line := range strings.Split(strings.TrimSpace(res.Commands[0].Output), "\n") {
		name, _, _ := strings.Cut(line, "=")
		if !allowed[name] && !shellOwn[name] {
			t.Errorf("variable %s is outside the allowlist", name)
		}
	}
	if strings.Contains(res.Commands[0].Output, "leak") || strings.Contains(res.Commands[0].Output, "secret") {
		t.Fatalf("secret leaked: %s", res.Commands[0].Output)
	}
	if !strings.Contains(res.Commands[0].Output, "PATH=") {
		t.Fatal("allowlisted PATH missing")
	}
}

func TestLogEvents(t *testing.T) {
	f := newFixture(t, nil)
	f.runner.Run(context.Background(), "job_20260101_011", ops(shellOp("true"), shellOp("false")), Modes{})
	got := events(f.logs)
	for _, want := range []string{"worker.patch_execution_start", "worker.command_executed", "worker.command_failed", "worker.patch_execution_complete"} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %s in %v", want, got)
		}
	}
}
