package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

func open(t testing.TB, files map[string]string) (*Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	testinfra.WriteFiles(t, dir, files)
	w, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w, w.Dir()
}

func diff(target, content string) patch.Operation {
	return patch.Operation{Type: patch.TypeFileEdit, Action: patch.ActionPatch, Target: target, Content: content}
}

func TestApplyDiffs(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		op    patch.Operation
		want  map[string]string // "" = must not exist
		err   error
	}{
		{"p1 headers", map[string]string{"a.txt": "one\ntwo\n"},
			diff("a.txt", "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"),
			map[string]string{"a.txt": "one\n2\n"}, nil},
		{"bare hunk", map[string]string{"a.txt": "one\n"},
			diff("a.txt", "@@ -1 +1,2 @@\n one\n+two\n"),
			map[string]string{"a.txt": "one\ntwo\n"}, nil},
		{"git new file", nil,
			diff("n/new.txt", "diff --git a/n/new.txt b/n/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n/new.txt\n@@ -0,0 +1 @@\n+fresh\n"),
			map[string]string{"n/new.txt": "fresh\n"}, nil},
		{"git delete", map[string]string{"old.txt": "bye\n"},
			diff("old.txt", "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"),
			map[string]string{"old.txt": ""}, nil},
		{"git rename with change", map[string]string{"from.txt": "x\ny\n"},
			diff("to.txt", "diff --git a/from.txt b/to.txt\nsimilarity index 50%\nrename from from.txt\nrename to to.txt\n--- a/from.txt\n+++ b/to.txt\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n"),
			map[string]string{"from.txt": "", "to.txt": "x\nz\n"}, nil},
		{"context mismatch", map[string]string{"a.txt": "one\n"},
			diff("a.txt", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-other\n+x\n"),
			map[string]string{"a.txt": "one\n"}, domain.ErrConflict},
		{"missing file", nil,
			diff("a.txt", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+x\n"), nil, domain.ErrNotFound},
		{"new file exists", map[string]string{"n.txt": "here\n"},
			diff("n.txt", "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n"),
			map[string]string{"n.txt": "here\n"}, domain.ErrConflict},
		{"garbage", nil, diff("a.txt", "not a diff at all"), nil, domain.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, dir := open(t, tt.files)
			_, err := Apply(w.Disk(), tt.op)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			for name, want := range tt.want {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if want == "" {
					if err == nil {
						t.Errorf("%s still exists", name)
					}
					continue
				}
				if string(b) != want {
					t.Errorf("%s = %q, want %q", name, b, want)
				}
			}
		})
	}
}

func TestOverlayLeavesDiskAlone(t *testing.T) {
	w, dir := open(t, map[string]string{"a.txt": "a\n"})
	o := NewOverlay(w.Disk())
	steps := []patch.Operation{
		{Type: patch.TypeFileEdit, Action: patch.ActionAppend, Target: "a.txt", Content: "b\n"},
		{Type: patch.TypeFileEdit, Action: patch.ActionRename, Target: "a.txt", Metadata: map[string]string{"to": "c.txt"}},
		diff("c.txt", "--- a/c.txt\n+++ b/c.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"),
		{Type: patch.TypeFileEdit, Action: patch.ActionDelete, Target: "c.txt"},
	}
	for _, op := range steps {
		if _, err := Apply(o, op); err != nil {
			t.Fatalf("%s: %v", op.Action, err)
		}
	}
	if _, err := Apply(o, diff("c.txt", "--- a/c.txt\n+++ b/c.txt\n@@ -1 +1 @@\n-a\n+x\n")); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("deleted file in overlay: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); len(entries) != 1 || string(b) != "a\n" {
		t.Fatalf("disk changed: %v %q", entries, b)
	}
}

func TestSnapshotRestoresSymlinksAndModes(t *testing.T) {
	for _, how := range []string{"in memory", "written down and read back by another executor"} {
		t.Run(how, func(t *testing.T) { testSnapshotRestores(t, how != "in memory") })
	}
}

func testSnapshotRestores(t *testing.T, encoded bool) {
	w, dir := open(t, map[string]string{"target.txt": "t", "exec.sh": "#!/bin/sh\n"})
	if err := os.Symlink("target.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "exec.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := w.Snapshot([]string{"exec.sh", "link", "made/deep/new.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if encoded {
		data, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		other, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = other.Close() })
		if s, err = other.Decode(data); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Decode([]byte(`[{"name":"x","kind":9}]`)); err == nil {
			t.Fatal("a snapshot with an unknown kind decoded")
		}
	}
	_ = os.Remove(filepath.Join(dir, "link"))
	_ = os.WriteFile(filepath.Join(dir, "link"), []byte("now a file"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "exec.sh"), []byte("changed"), 0o755)
	_ = os.Chmod(filepath.Join(dir, "exec.sh"), 0o600)
	_ = os.MkdirAll(filepath.Join(dir, "made", "deep"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "made", "deep", "new.txt"), []byte("n"), 0o644)
	restored, err := s.Restore()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(restored, ",") != "exec.sh,link,made/deep/new.txt" {
		t.Fatalf("restored = %v", restored)
	}
	if l, err := os.Readlink(filepath.Join(dir, "link")); err != nil || l != "target.txt" {
		t.Fatalf("link = %q %v", l, err)
	}
	fi, _ := os.Stat(filepath.Join(dir, "exec.sh"))
	if b, _ := os.ReadFile(filepath.Join(dir, "exec.sh")); string(b) != "#!/bin/sh\n" || fi.Mode().Perm() != 0o755 {
		t.Fatalf("exec.sh = %q %v", b, fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(dir, "made")); err == nil {
		t.Fatal("directories created by the job were left behind")
	}
	// A second restore has nothing left to do.
	if again, err := s.Restore(); err != nil || len(again) != 0 {
		t.Fatalf("second restore = %v %v", again, err)
	}
}

func BenchmarkApplyDiff(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 2000; i++ {
		sb.WriteString("line\n")
	}
	w, _ := open(b, map[string]string{"big.txt": sb.String()})
	op := diff("big.txt", "--- a/big.txt\n+++ b/big.txt\n@@ -1000,3 +1000,3 @@\n line\n-line\n+LINE\n line\n")
	for b.Loop() {
		o := NewOverlay(w.Disk())
		if _, err := Apply(o, op); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSnapshotRestore(b *testing.B) {
	files := map[string]string{}
	var names []string
	for i := 0; i < 50; i++ {
		n := filepath.Join("d", strings.Repeat("x", i%5+1)+string(rune('a'+i%26))+".txt")
		files[n] = strings.Repeat("content\n", 100)
		names = append(names, n)
	}
	w, _ := open(b, files)
	for b.Loop() {
		s, err := w.Snapshot(names)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Restore(); err != nil {
			b.Fatal(err)
		}
	}
}

// A symlink that stays inside the workspace is not followed either: writing docs/cfg must not
// change .git/config or src/main.go that the approval never named.
func TestWritesDoNotFollowSymlinksInsideTheWorkspace(t *testing.T) {
	w, dir := open(t, map[string]string{"src/main.go": "package main\n", "docs/readme.md": "r"})
	if err := os.Symlink("../src/main.go", filepath.Join(dir, "docs", "cfg")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../src", filepath.Join(dir, "docs", "srcdir")); err != nil {
		t.Fatal(err)
	}
	disk := w.Disk()
	for _, name := range []string{"docs/cfg", "docs/srcdir/main.go", "docs/srcdir/new.go"} {
		if err := disk.Write(name, []byte("changed"), 0o644); !errors.Is(err, domain.ErrPermission) {
			t.Errorf("write %s: %v, want a permission error", name, err)
		}
	}
	if err := disk.Rename("docs/readme.md", "docs/srcdir/readme.md"); !errors.Is(err, domain.ErrPermission) {
		t.Errorf("rename into a linked directory: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "src", "main.go")); string(b) != "package main\n" {
		t.Fatalf("src/main.go changed through a link: %q", b)
	}
	if err := disk.Write("docs/plain.md", []byte("ok"), 0o644); err != nil {
		t.Fatalf("plain write: %v", err)
	}
}
