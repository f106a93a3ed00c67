package patch

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

const sampleDiff = `diff --git a/docs/a.md b/docs/a.md
index 83db48f..bf269f4 100644
--- a/docs/a.md
+++ b/docs/a.md
@@ -1,3 +1,3 @@
 # Title
-old line
+new line
 end
diff --git a/docs/new.md b/docs/new.md
new file mode 100644
index 0000000..3b18e51
--- /dev/null
+++ b/docs/new.md
@@ -0,0 +1,2 @@
+hello
+world
\ No newline at end of file
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/src/x.go b/src/y.go
similarity index 100%
rename from src/x.go
rename to src/y.go
`

func TestParseFormats(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		format   Format
		ops      []string // type/action/target
		paths    []string
		flags    []Flag
		stats    DiffStats
		unknownN int
		checkOp  func(t *testing.T, ops []Operation)
	}{
		{
			name:   "empty",
			text:   "  \n",
			format: FormatEmpty,
			paths:  []string{},
			flags:  []Flag{},
		},
		{
			name: "json commands",
			text: `[
			 {"type":"file_edit","action":"update","target":"./pkg/agent/loop.go","content":"package agent\n"},
			 {"type":"shell_command","action":"run","target":"go test ./pkg/...","content":""},
			 {"type":"git_operation","action":"add","target":"pkg/agent/loop.go"},
			 {"type":"git_operation","action":"commit","content":"msg"}]`,
			format: FormatJSON,
			ops:    []string{"file_edit/update/pkg/agent/loop.go", "shell_command/run/go test ./pkg/...", "git_operation/add/pkg/agent/loop.go", "git_operation/commit/"},
			paths:  []string{"pkg/agent/loop.go"},
			flags:  []Flag{FlagShell},
			stats:  DiffStats{Files: 1, Additions: 1},
		},
		{
			name: "json rename delete push browser",
			text: `[{"type":"file_edit","action":"rename","target":"a.txt","metadata":{"to":"b/c.txt"}},
			 {"type":"file_edit","action":"delete","target":"gone.txt"},
			 {"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git","metadata":{"branch":"main"}},
			 {"type":"browser","action":"chrome_navigate","target":"https://example.com/"},
			 {"type":"browser","action":"chrome_click_element","target":"#more"}]`,
			format: FormatJSON,
			ops:    []string{"file_edit/rename/a.txt", "file_edit/delete/gone.txt", "git_operation/push/https://git.example.com/team/repo.git", "browser/chrome_navigate/https://example.com/", "browser/chrome_click_element/#more"},
			paths:  []string{"a.txt", "b/c.txt", "gone.txt"},
			flags:  []Flag{FlagBrowser, FlagDelete, FlagNetwork, FlagPushPublic, FlagRename},
			stats:  DiffStats{Files: 3},
		},
		{
			name:   "markdown keeps author order",
			text:   "Plan:\n\n```bash\ngo test ./...\n```\n\n```go:pkg/a/a.go\npackage a\n```\n\n```git\ngit add pkg/a/a.go\ngit commit -m \"add a\"\n```\n",
			format: FormatMarkdown,
			ops:    []string{"shell_command/run/go test ./...", "file_edit/update/pkg/a/a.go", "git_operation/add/pkg/a/a.go", "git_operation/commit/"},
			paths:  []string{"pkg/a/a.go"},
			flags:  []Flag{FlagShell},
			stats:  DiffStats{Files: 1, Additions: 1},
			checkOp: func(t *testing.T, ops []Operation) {
				if ops[1].Content != "package a\n" {
					t.Errorf("fence content = %q", ops[1].Content)
				}
				if ops[3].Content != "add a" {
					t.Errorf("commit message = %q", ops[3].Content)
				}
			},
		},
		{
			name:     "markdown reports unknown fences",
			text:     "```python\nprint(1)\n```\n```sh\nls\n```\n",
			format:   FormatMarkdown,
			ops:      []string{"shell_command/run/ls"},
			paths:    []string{},
			flags:    []Flag{FlagShell},
			unknownN: 1,
		},
		{
			name:   "markdown diff and json fences",
			text:   "```diff\n--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-a\n+b\n```\n```json\n[{\"type\":\"git_operation\",\"action\":\"push\",\"metadata\":{\"remote\":\"https://git.example.com/team/repo.git\",\"branch\":\"main\"}}]\n```\n",
			format: FormatMarkdown,
			ops:    []string{"file_edit/patch/x.txt", "git_operation/push/https://git.example.com/team/repo.git"},
			paths:  []string{"x.txt"},
			flags:  []Flag{FlagNetwork, FlagPushPublic},
			stats:  DiffStats{Files: 1, Additions: 1, Deletions: 1},
		},
		{
			name:   "git diff with create delete rename",
			text:   sampleDiff,
			format: FormatDiff,
			ops:    []string{"file_edit/patch/docs/a.md", "file_edit/create/docs/new.md", "file_edit/delete/old.txt", "file_edit/rename/src/x.go"},
			paths:  []string{"docs/a.md", "docs/new.md", "old.txt", "src/x.go", "src/y.go"},
			flags:  []Flag{FlagDelete, FlagRename},
			stats:  DiffStats{Files: 4, Additions: 3, Deletions: 2},
			checkOp: func(t *testing.T, ops []Operation) {
				if ops[1].Content != "hello\nworld" {
					t.Errorf("created content = %q", ops[1].Content)
				}
				want := "--- a/docs/a.md\n+++ b/docs/a.md\n@@ -1,3 +1,3 @@\n # Title\n-old line\n+new line\n end\n"
				if ops[0].Content != want {
					t.Errorf("patch content = %q", ops[0].Content)
				}
				if ops[3].Metadata["to"] != "src/y.go" {
					t.Errorf("rename to = %q", ops[3].Metadata["to"])
				}
			},
		},
		{
			name:   "markdown that starts with a link",
			text:   "[design](https://example.com/doc)\n```sh\nmake\n```\n",
			format: FormatMarkdown,
			ops:    []string{"shell_command/run/make"},
			paths:  []string{},
			flags:  []Flag{FlagShell},
		},
		{
			name:   "byte order mark",
			text:   "\ufeff[{\"type\":\"shell_command\",\"action\":\"run\",\"target\":\"make\"}]",
			format: FormatJSON,
			ops:    []string{"shell_command/run/make"},
			paths:  []string{},
			flags:  []Flag{FlagShell},
		},
		{
			name:   "plain unified diff",
			text:   "--- docs/a.md\t2024-01-01\n+++ docs/a.md\t2024-01-02\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
			format: FormatDiff,
			ops:    []string{"file_edit/patch/docs/a.md"},
			paths:  []string{"docs/a.md"},
			flags:  []Flag{},
			stats:  DiffStats{Files: 1, Additions: 1, Deletions: 1},
		},
		{
			name:   "secret content is flagged",
			text:   `[{"type":"file_edit","action":"create","target":"config/.env","content":"OPENAI_API_KEY=sk-abcdefghijklmnopqrstuv"}]`,
			format: FormatJSON,
			ops:    []string{"file_edit/create/config/.env"},
			paths:  []string{"config/.env"},
			flags:  []Flag{FlagSendSensitive},
			stats:  DiffStats{Files: 1, Additions: 1},
		},
		{
			name:   "shell publish and rm are flagged",
			text:   `[{"type":"shell_command","action":"run","target":"rm -rf build && npm publish"}]`,
			format: FormatJSON,
			ops:    []string{"shell_command/run/rm -rf build && npm publish"},
			paths:  []string{},
			flags:  []Flag{FlagDelete, FlagNetwork, FlagPushPublic, FlagShell},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.text, Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if p.Format != tc.format {
				t.Errorf("format = %s, want %s", p.Format, tc.format)
			}
			var got []string
			for i, op := range p.Operations {
				if op.Index != i {
					t.Errorf("op %d has index %d", i, op.Index)
				}
				if len(op.ContentSHA256) != 64 {
					t.Errorf("op %d content digest %q", i, op.ContentSHA256)
				}
				got = append(got, fmt.Sprintf("%s/%s/%s", op.Type, op.Action, op.Target))
			}
			if !slices.Equal(got, tc.ops) {
				t.Errorf("ops = %q\nwant %q", got, tc.ops)
			}
			if !slices.Equal(p.AffectedPaths, tc.paths) {
				t.Errorf("paths = %q, want %q", p.AffectedPaths, tc.paths)
			}
			if !slices.Equal(p.Flags, tc.flags) {
				t.Errorf("flags = %q, want %q", p.Flags, tc.flags)
			}
			if p.Stats != tc.stats {
				t.Errorf("stats = %+v, want %+v", p.Stats, tc.stats)
			}
			if len(p.Unknown) != tc.unknownN {
				t.Errorf("unknown = %q, want %d entries", p.Unknown, tc.unknownN)
			}
			if len(p.Hash) != 64 || p.Hash != Hash(p.Operations) {
				t.Errorf("hash %q does not match its operations", p.Hash)
			}
			if tc.checkOp != nil {
				tc.checkOp(t, p.Operations)
			}
		})
	}
}

func TestParseErrorsNameTheOperation(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"invalid json", `[{"type":`, []string{"patch", "invalid JSON"}},
		{"object instead of array", `{"type":"file_edit"}`, []string{"must be an array"}},
		{"unknown type", `[{"type":"shell_command","action":"run","target":"ls"},{"type":"ftp","action":"put","target":"x"}]`, []string{"command 2", "type", "unknown type \"ftp\""}},
		{"unknown action", `[{"type":"file_edit","action":"chmod","target":"x"}]`, []string{"command 1", "action", "unknown action \"chmod\""}},
		{"missing action", `[{"type":"file_edit","target":"x"}]`, []string{"command 1", "action", "missing"}},
		{"empty target", `[{"type":"file_edit","action":"create","target":""}]`, []string{"command 1", "target", "empty path"}},
		{"absolute path", `[{"type":"file_edit","action":"create","target":"/etc/passwd"}]`, []string{"command 1", "target", "absolute path"}},
		{"dotdot path", `[{"type":"file_edit","action":"create","target":"a/../../x"}]`, []string{"command 1", "target", "'..'"}},
		{"nul in path", "[{\"type\":\"file_edit\",\"action\":\"create\",\"target\":\"a\\u0000b\"}]", []string{"command 1", "target", "NUL"}},
		{"nul in text", "```sh\nls\x00\n```", []string{"patch", "NUL"}},
		{"rename without to", `[{"type":"file_edit","action":"rename","target":"a"}]`, []string{"command 1", "metadata", "metadata.to"}},
		{"rename outside", `[{"type":"file_edit","action":"rename","target":"a","metadata":{"to":"../b"}}]`, []string{"command 1", "metadata.to", "'..'"}},
		{"empty shell", `[{"type":"shell_command","action":"run","target":"  "}]`, []string{"command 1", "target", "empty command"}},
		{"non-string field", `[{"type":"file_edit","action":"create","target":7}]`, []string{"command 1", "target", "must be a string"}},
		{"navigate javascript", `[{"type":"browser","action":"chrome_navigate","target":"javascript:alert(1)"}]`, []string{"command 1", "target", "http(s) URL"}},
		{"execute script is not a bridge tool", `[{"type":"browser","action":"chrome_execute_script","content":"document.title"}]`, []string{"command 1", "action", "unknown action \"chrome_execute_script\"", "chrome_click_element"}},
		{"inject script is not offered", `[{"type":"browser","action":"chrome_inject_script","metadata":{"type":"MAIN"},"content":"1"}]`, []string{"command 1", "action", "unknown action \"chrome_inject_script\""}},
		{"click without selector", `[{"type":"browser","action":"chrome_click_element","metadata":{"x":"10"}}]`, []string{"command 1", "target", "metadata.x and metadata.y"}},
		{"fill without selector", `[{"type":"browser","action":"chrome_fill_or_select","content":"v"}]`, []string{"command 1", "target", "empty selector"}},
		{"fill value twice", `[{"type":"browser","action":"chrome_fill_or_select","target":"#q","content":"a","metadata":{"value":"b"}}]`, []string{"command 1", "metadata.value", "both"}},
		{"keyboard without keys", `[{"type":"browser","action":"chrome_keyboard","target":"#q"}]`, []string{"command 1", "content", "keys"}},
		{"git option as target", `[{"type":"git_operation","action":"checkout","target":"--force"}]`, []string{"command 1", "target", "option"}},
		{"unclosed fence", "text\n```bash\nls\n", []string{"fence 1 (line 2)", "not closed"}},
		{"fence path escape", "```go:../x.go\npackage x\n```\n", []string{"fence 1 (line 1)", "target", "'..'"}},
		{"bad git line", "```git\ngit add a\ngit rebase main\n```\n", []string{"fence 1 (line 1) git line 3", "unknown git subcommand"}},
		{"bad hunk count", "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n", []string{"diff file 1 (line 1)", "hunk 1", "body has"}},
		{"binary diff", "diff --git a/x.png b/x.png\nBinary files a/x.png and b/x.png differ\n", []string{"diff file 1", "binary"}},
		{"diff path escape", "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n", []string{"diff file 1", "'..'"}},
		{"not a patch", "please change the title", []string{"unrecognised format"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.text, Options{})
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestBroadOverwrite(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 4 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"type":"file_edit","action":"update","target":"f%d.txt","content":"x"}`, i)
	}
	b.WriteString("]")
	for _, tc := range []struct {
		limit int
		want  bool
	}{{3, true}, {4, false}, {0, false}} {
		p, err := Parse(b.String(), Options{BroadOverwriteFiles: tc.limit})
		if err != nil {
			t.Fatal(err)
		}
		if p.HasFlag(FlagBroadOverwrite) != tc.want {
			t.Errorf("limit %d: broad_overwrite = %v, want %v", tc.limit, !tc.want, tc.want)
		}
	}
}

func TestHashBindsContent(t *testing.T) {
	base := `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"hello","metadata":{"k":"v","a":"b"}}]`
	p1, err := Parse(base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Same operations in another spelling hash the same: the hash binds content, not formatting.
	same := []string{
		`[{"metadata":{"a":"b","k":"v"},"content":"hello","target":"./docs//a.md","action":"UPDATE","type":"file_edit"}]`,
	}
	for _, s := range same {
		p, err := Parse(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Hash != p1.Hash {
			t.Errorf("%s hashes %s, want %s", s, p.Hash, p1.Hash)
		}
	}
	different := []string{
		`[{"type":"file_edit","action":"update","target":"docs/a.md","content":"hello!","metadata":{"k":"v","a":"b"}}]`,
		`[{"type":"file_edit","action":"update","target":"docs/b.md","content":"hello","metadata":{"k":"v","a":"b"}}]`,
		`[{"type":"file_edit","action":"append","target":"docs/a.md","content":"hello","metadata":{"k":"v","a":"b"}}]`,
		`[{"type":"file_edit","action":"update","target":"docs/a.md","content":"hello","metadata":{"k":"w","a":"b"}}]`,
		`[{"type":"shell_command","action":"run","target":"true"},{"type":"file_edit","action":"update","target":"docs/a.md","content":"hello","metadata":{"k":"v","a":"b"}}]`,
	}
	for _, s := range different {
		p, err := Parse(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Hash == p1.Hash {
			t.Errorf("%s hashes like the original", s)
		}
	}
	if _, err := Verify(base, p1.Hash, Options{}); err != nil {
		t.Errorf("Verify of unchanged text: %v", err)
	}
	if _, err := Verify(different[0], p1.Hash, Options{}); !errors.Is(err, ErrHashMismatch) {
		t.Errorf("Verify of changed text = %v, want ErrHashMismatch", err)
	}
	// A forged digest field does not fool Hash.
	ops := slices.Clone(p1.Operations)
	ops[0].Content = "evil"
	if Hash(ops) == p1.Hash {
		t.Error("changing content without changing the digest kept the hash")
	}
}

func TestHasPathPrefix(t *testing.T) {
	tests := []struct {
		path, prefix string
		want         bool
	}{
		{"docs/a.md", "docs/", true},
		{"docs/a.md", "docs", true},
		{"docs", "docs/", true},
		{"docsx/b.md", "docs/", false},
		{"docsx/b.md", "docs", false},
		{"README.md", "README.md", true},
		{"README.md.bak", "README.md", false},
		{"a/docs/x", "docs/", false},
		{"x", "", false},
	}
	for _, tc := range tests {
		if got := HasPathPrefix(tc.path, tc.prefix); got != tc.want {
			t.Errorf("HasPathPrefix(%q, %q) = %v, want %v", tc.path, tc.prefix, got, tc.want)
		}
	}
}

func TestNormalizePath(t *testing.T) {
	good := map[string]string{"./a/b": "a/b", "a//b/": "a/b", "a/./b": "a/b", "日本/語.md": "日本/語.md"}
	for in, want := range good {
		got, err := NormalizePath(in)
		if err != nil || got != want {
			t.Errorf("NormalizePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", " ", ".", "/a", "~/a", "C:/a", "a\\b", "a/../b", "..", "a\x00b", "a\nb", "\xff", " a"} {
		if got, err := NormalizePath(bad); err == nil {
			t.Errorf("NormalizePath(%q) = %q, want an error", bad, got)
		}
	}
}

func TestMarkdownGitLines(t *testing.T) {
	p, err := Parse("```git\n# publish\ngit add -A\ngit add a.go b.go\ngit commit -m \"first\" -m 'second'\ngit reset --hard\ngit checkout -b feature/x\ngit push -f -u https://git.example.com/team/repo.git main\n```\n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		action, target, content string
		md                      map[string]string
		flags                   []Flag
	}
	wants := []want{
		{"add", ".", "", nil, nil},
		{"add", "a.go", "", nil, nil},
		{"add", "b.go", "", nil, nil},
		{"commit", "", "first\n\nsecond", nil, nil},
		{"reset", "", "", map[string]string{MetaMode: "hard"}, []Flag{FlagDelete}},
		{"checkout", "feature/x", "", map[string]string{MetaNewBranch: "true"}, nil},
		{"push", "https://git.example.com/team/repo.git", "", map[string]string{MetaForce: "true", MetaSetUpstream: "true", MetaBranch: "main"}, []Flag{FlagForcePush, FlagNetwork, FlagPushPublic}},
	}
	if len(p.Operations) != len(wants) {
		t.Fatalf("%d operations, want %d: %+v", len(p.Operations), len(wants), p.Operations)
	}
	for i, w := range wants {
		op := p.Operations[i]
		if op.Type != TypeGit || op.Action != w.action || op.Target != w.target || op.Content != w.content ||
			fmt.Sprint(op.Metadata) != fmt.Sprint(w.md) || !slices.Equal(op.Flags, w.flags) {
			t.Errorf("op %d = %+v, want %+v", i, op, w)
		}
	}
	for _, bad := range []string{"```git\ngit push origin main; rm -rf /\n```\n", "```git\ngit commit -m\n```\n", "```git\nls\n```\n", "```git\ngit commit -m 'x\n```\n"} {
		if _, err := Parse(bad, Options{}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "git line") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
