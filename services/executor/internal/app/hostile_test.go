package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/testpeer"
)

// hostileCase is one attempt to get out of the workspace or to outlast the job.
type hostileCase struct {
	name string
	// setup prepares the workspace (ws) and its surroundings (parent) before the baseline.
	setup func(t *testing.T, ws, parent string)
	// ops builds the job; parent is the directory around the workspace.
	ops func(parent string) []patch.Operation
	// contained: the last operation may succeed, because what it does stays inside.
	contained bool
	// wantErr, when set, must appear in the last operation's error.
	wantErr string
	// timeout, when set, is the command timeout (cases that must be stopped by it).
	timeout time.Duration
}

func create(target string) func(string) []patch.Operation {
	return func(string) []patch.Operation { return ops(fileOp(patch.ActionCreate, target, "pwned\n")) }
}

func one(op patch.Operation) func(string) []patch.Operation {
	return func(string) []patch.Operation { return ops(op) }
}

func symlink(target, name string) func(t *testing.T, ws, parent string) {
	return func(t *testing.T, ws, parent string) {
		t.Helper()
		if err := os.Symlink(strings.ReplaceAll(target, "$PARENT", parent), filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func withFile(name, content string) func(t *testing.T, ws, parent string) {
	return func(t *testing.T, ws, _ string) { writeFile(t, filepath.Join(ws, name), content) }
}

func both(fs ...func(t *testing.T, ws, parent string)) func(t *testing.T, ws, parent string) {
	return func(t *testing.T, ws, parent string) {
		for _, f := range fs {
			f(t, ws, parent)
		}
	}
}

func diffOp(target, diff string) patch.Operation {
	return patch.Operation{Type: patch.TypeFileEdit, Action: patch.ActionPatch, Target: target, Content: diff}
}

func hostileCases() []hostileCase {
	secretDiff := "--- a/../outside/secret.txt\n+++ b/../outside/secret.txt\n@@ -1 +1 @@\n-top secret\n+pwned\n"
	return []hostileCase{
		// Traversal in every form.
		{name: "dotdot", ops: create("../escape.txt"), wantErr: "leaves the workspace"},
		{name: "double dotdot", ops: create("../../escape.txt")},
		{name: "dotdot after dir", ops: create("a/../../escape.txt")},
		{name: "dot then dotdot", ops: create("./../escape.txt")},
		{name: "deep dotdot", ops: create("a/b/../../../escape.txt")},
		{name: "dotdot into sibling", ops: create("../outside/secret.txt")},
		{name: "trailing dotdot", ops: create("a/..")},
		{name: "dotdot with slashes", ops: create("a//..//..//escape.txt")},
		{name: "absolute into parent", ops: func(p string) []patch.Operation {
			return ops(fileOp(patch.ActionCreate, filepath.Join(p, "escape.txt"), "x"))
		}, wantErr: "absolute"},
		{name: "absolute overwrite outside", ops: func(p string) []patch.Operation {
			return ops(fileOp(patch.ActionUpdate, filepath.Join(p, "outside", "secret.txt"), "x"))
		}},
		{name: "absolute tmp", ops: create("/tmp/picoclaw-executor-escape.txt")},
		{name: "home relative", ops: create("~/escape.txt")},
		{name: "drive path", ops: create("C:/escape.txt")},
		{name: "backslash traversal", ops: create("..\\escape.txt")},
		{name: "NUL byte", ops: create("ok.txt\x00../../escape.txt"), wantErr: "NUL"},
		{name: "invalid UTF-8", ops: create("bad\xff.txt"), wantErr: "UTF-8"},
		{name: "newline in name", ops: create("a\nb.txt")},
		{name: "escape char in name", ops: create("a\x1b[2Jb.txt")},
		{name: "empty target", ops: create("")},
		{name: "workspace itself", ops: create(".")},
		{name: "overlong component", ops: create(strings.Repeat("a", 300))},
		{name: "git hooks", ops: create(".git/hooks/pre-commit"), wantErr: "git internals"},
		{name: "git config nested", ops: create("sub/.git/config")},
		// Symlinks.
		{name: "symlink file pointing out", setup: symlink("$PARENT/outside/secret.txt", "link"),
			ops: one(fileOp(patch.ActionUpdate, "link", "pwned")), wantErr: "leaves the workspace"},
		{name: "append through symlink out", setup: symlink("$PARENT/outside/secret.txt", "link"),
			ops: one(fileOp(patch.ActionAppend, "link", "pwned"))},
		{name: "symlinked parent directory", setup: symlink("$PARENT/outside", "linkdir"),
			ops: create("linkdir/new.txt")},
		{name: "symlinked parent directory deep", setup: symlink("$PARENT/outside", "linkdir"),
			ops: create("linkdir/x/y/z.txt")},
		{name: "relative symlink dir out", setup: symlink("../outside", "rel"), ops: create("rel/new.txt")},
		{name: "symlink to root", setup: symlink("/", "rootlink"), ops: create("rootlink/tmp/picoclaw-executor-escape.txt")},
		{name: "dangling symlink out", setup: symlink("$PARENT/outside/new.txt", "dang"), ops: create("dang")},
		{name: "symlink loop", setup: symlink("loop", "loop"), ops: create("loop")},
		{name: "delete through symlinked dir", setup: symlink("$PARENT/outside", "linkdir"),
			ops: one(fileOp(patch.ActionDelete, "linkdir/secret.txt", ""))},
		{name: "delete outside", ops: one(fileOp(patch.ActionDelete, "../outside/secret.txt", ""))},
		{name: "delete symlink itself stays inside", setup: symlink("$PARENT/outside/secret.txt", "link"),
			ops: one(fileOp(patch.ActionDelete, "link", "")), contained: true},
		{name: "symlink made by shell then written through", ops: func(string) []patch.Operation {
			return ops(shellOp("ln -s ../outside made"), fileOp(patch.ActionCreate, "made/pwn.txt", "x"))
		}},
		{name: "hard link to outside file", setup: func(t *testing.T, ws, parent string) {
			if err := os.Link(filepath.Join(parent, "outside", "secret.txt"), filepath.Join(ws, "hard.txt")); err != nil {
				t.Fatal(err)
			}
		}, ops: one(fileOp(patch.ActionUpdate, "hard.txt", "pwned")), wantErr: "hard links"},
		{name: "fifo is not a file", setup: func(t *testing.T, ws, _ string) {
			if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ops: one(fileOp(patch.ActionAppend, "fifo", "x")), wantErr: "not a regular file"},
		{name: "update a directory", setup: withFile("dir/f.txt", "x"), ops: one(fileOp(patch.ActionUpdate, "dir", "x"))},
		{name: "delete a directory", setup: withFile("dir/f.txt", "x"), ops: one(fileOp(patch.ActionDelete, "dir", ""))},
		// Renames.
		{name: "rename to outside", setup: withFile("a.txt", "a"), ops: one(renameOp("a.txt", "../moved.txt"))},
		{name: "rename to absolute", setup: withFile("a.txt", "a"), ops: func(p string) []patch.Operation {
			return ops(renameOp("a.txt", filepath.Join(p, "moved.txt")))
		}},
		{name: "rename into symlinked dir", setup: both(withFile("a.txt", "a"), symlink("$PARENT/outside", "linkdir")),
			ops: one(renameOp("a.txt", "linkdir/moved.txt"))},
		{name: "rename from outside", ops: one(renameOp("../outside/secret.txt", "stolen.txt"))},
		{name: "rename from symlinked dir", setup: symlink("$PARENT/outside", "linkdir"),
			ops: one(renameOp("linkdir/secret.txt", "stolen.txt"))},
		{name: "rename onto existing", setup: both(withFile("a.txt", "a"), withFile("b.txt", "b")),
			ops: one(renameOp("a.txt", "b.txt")), wantErr: "already exists"},
		{name: "rename without destination", setup: withFile("a.txt", "a"), ops: one(renameOp("a.txt", ""))},
		// Diffs.
		{name: "diff header touching dotdot", ops: one(diffOp("../outside/secret.txt", secretDiff))},
		{name: "diff header dotdot under innocent target", ops: one(diffOp("a.txt", secretDiff))},
		{name: "diff new file outside", ops: one(diffOp("x.txt", "--- /dev/null\n+++ b/../new.txt\n@@ -0,0 +1 @@\n+pwned\n"))},
		{name: "git diff rename outside", setup: withFile("a.txt", "a\n"), ops: one(diffOp("a.txt",
			"diff --git a/a.txt b/../moved.txt\nsimilarity index 100%\nrename from a.txt\nrename to ../moved.txt\n"))},
		{name: "diff through symlink", setup: symlink("$PARENT/outside/secret.txt", "link"), ops: one(diffOp("link",
			"--- a/link\n+++ b/link\n@@ -1 +1 @@\n-top secret\n+pwned\n"))},
		{name: "diff into git internals", ops: one(diffOp(".git/config", "--- /dev/null\n+++ b/.git/config\n@@ -0,0 +1 @@\n+x\n"))},
		{name: "diff context mismatch", setup: withFile("a.txt", "one\ntwo\n"), ops: one(diffOp("a.txt",
			"--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-three\n+four\n")), wantErr: "context mismatch"},
		{name: "diff names another file", setup: both(withFile("a.txt", "x\n"), withFile("b.txt", "x\n")), ops: one(diffOp("a.txt",
			"--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-x\n+y\n")), wantErr: "does not change a.txt"},
		// Processes.
		{name: "command printing 100 MB", ops: one(shellOp("head -c 104857600 /dev/zero")), contained: true},
		{name: "command printing 100 MB to stderr", ops: one(shellOp("head -c 104857600 /dev/zero >&2")), contained: true},
		{name: "command sleeping forever", ops: one(shellOp("sleep 1000")), wantErr: "timed out", timeout: 2 * time.Second},
		{name: "command ignoring SIGTERM", ops: one(shellOp("trap '' TERM INT HUP; echo $$ > self.pid; sleep 1000")), wantErr: "timed out", timeout: 2 * time.Second},
		{name: "fork outliving its parent", ops: one(shellOp("sleep 1000 & echo $! > bg.pid")), contained: true},
		{name: "double fork", ops: one(shellOp("( (sleep 1000 & echo $! > dbl.pid) & ); echo ok")), contained: true},
		{name: "nohup child", ops: one(shellOp("nohup sleep 1000 >/dev/null 2>&1 & echo $! > nohup.pid")), contained: true},
		{name: "child holding the output pipe", ops: one(shellOp("(sleep 1000; echo late) & echo $! > pipe.pid; echo done")), contained: true},
		{name: "reads stdin", ops: one(shellOp("cat")), contained: true},
		{name: "NUL in command", ops: one(shellOp("echo a\x00b"))},
		{name: "empty command", ops: one(shellOp("   "))},
		// Git.
		{name: "git add outside", ops: one(gitOp(patch.ActionGitAdd, "../outside/secret.txt", "", nil))},
		{name: "git add option injection", ops: one(gitOp(patch.ActionGitAdd, "--chmod=+x", "", nil))},
		{name: "git checkout option as branch", ops: one(gitOp(patch.ActionGitCheckout, "", "", map[string]string{"branch": "--orphan=x"}))},
		{name: "git push ext transport", ops: one(gitOp(patch.ActionGitPush, "", "", map[string]string{"remote": "ext::sh -c touch% /tmp/pwn"}))},
		{name: "git finds no repository above the workspace", setup: func(t *testing.T, ws, parent string) {
			if out, err := exec.Command("git", "init", "-q", parent).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			writeFile(t, filepath.Join(ws, "a.txt"), "a")
		}, ops: one(gitOp(patch.ActionGitAdd, "a.txt", "", nil)), wantErr: "exit status"},
		// Other.
		{name: "unknown operation type", ops: one(patch.Operation{Type: "kernel_module", Action: "load", Target: "x"})},
		{name: "unknown file action", ops: one(fileOp("chmod", "a.txt", "777"))},
		{name: "browser without bridge", ops: one(browserOp(patch.ActionChromeNavigate, "https://example.com", "")), wantErr: "no MCP Chrome bridge"},
	}
}

func TestHostileOperations(t *testing.T) {
	cases := hostileCases()
	if len(cases) < 50 {
		t.Fatalf("only %d hostile cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, func(c *RunnerConfig) {
				if tc.timeout > 0 {
					c.CommandTimeout = tc.timeout
				}
			})
			if tc.setup != nil {
				tc.setup(t, f.ws, f.parent)
			}
			before := tree(t, f.parent, f.ws)
			list := tc.ops(f.parent)
			res := f.runner.Run(context.Background(), "job_20260101_001", list, Modes{RollbackOnFailure: true})

			last := res.Commands[len(res.Commands)-1]
			if !tc.contained && last.Success {
				t.Errorf("hostile operation succeeded: %+v", last)
			}
			if tc.wantErr != "" && !strings.Contains(last.Error, tc.wantErr) {
				t.Errorf("error = %q, want it to mention %q", last.Error, tc.wantErr)
			}
			if last.Success && len(last.Output) > 64<<10+100 {
				t.Errorf("output not capped: %d bytes", len(last.Output))
			}
			if after := tree(t, f.parent, f.ws); !equalTrees(before, after) {
				t.Errorf("outside the workspace changed:\nbefore %v\nafter  %v", before, after)
			}
			if _, err := os.Stat("/tmp/picoclaw-executor-escape.txt"); err == nil {
				t.Error("/tmp/picoclaw-executor-escape.txt was written")
			}
			if left := testpeer.InDir(f.ws); len(left) > 0 {
				t.Errorf("processes still running in the workspace: %v", left)
			}
		})
	}
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
