package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

// A key shaped like an OpenAI key: pkg/redact masks it.
const fakeKey = "sk-proj-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCD"

func fixtureRepo(t testing.TB) (*Workspace, string) {
	t.Helper()
	return open(t, map[string]string{
		"calc.go":                   "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b }\n",
		"calc_test.go":              "package calc\n",
		"README.md":                 "# calc\n",
		".gitignore":                "build/\n*.log\n!keep.log\n/root-only.txt\n",
		"build/out.txt":             "built\n",
		"debug.log":                 "log\n",
		"keep.log":                  "kept\n",
		"root-only.txt":             "x\n",
		"sub/root-only.txt":         "y\n",
		"sub/.gitignore":            "local.txt\n",
		"sub/local.txt":             "ignored below sub\n",
		"sub/deep/a.go":             "package deep\n// Add is used here too\n",
		".env":                      "TOKEN=abc\n",
		".env.production":           "TOKEN=abc\n",
		"config/server.pem":         "-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----\n",
		".ssh/id_ed25519":           "key\n",
		"settings/credentials.json": "{}\n",
		"leaky.txt":                 "openai key " + fakeKey + "\nAdd here\n",
		"image.png":                 "\x89PNG\r\n\x1a\n\x00\x00\x00IHDR",
	})
}

func paths(t Tree) []string {
	var out []string
	for _, e := range t.Entries {
		out = append(out, e.Path)
	}
	return out
}

func TestListTreeRespectsGitignoreAndWithholdsSecrets(t *testing.T) {
	w, _ := fixtureRepo(t)
	tree, err := w.ListTree(TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := paths(tree)
	for _, want := range []string{"calc.go", "README.md", "keep.log", "sub", "sub/deep/a.go", "sub/root-only.txt", "image.png", "leaky.txt"} {
		if !slices.Contains(got, want) {
			t.Errorf("tree lacks %s: %v", want, got)
		}
	}
	for _, never := range []string{"build", "build/out.txt", "debug.log", "root-only.txt", "sub/local.txt", ".env", ".env.production", "config/server.pem", ".ssh/id_ed25519", "settings/credentials.json", ".git"} {
		if slices.Contains(got, never) {
			t.Errorf("tree lists %s: %v", never, got)
		}
	}
	if tree.Withheld != 5 {
		t.Errorf("withheld = %d, want 5", tree.Withheld)
	}
	// Breadth first: every top-level entry comes before anything deeper.
	if i, j := slices.Index(got, "sub/deep"), slices.Index(got, "calc.go"); i < j {
		t.Errorf("not breadth first: %v", got)
	}
}

func TestListTreeCaps(t *testing.T) {
	w, _ := fixtureRepo(t)
	tree, err := w.ListTree(TreeOptions{MaxDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths(tree) {
		if strings.Contains(p, "/") {
			t.Errorf("depth 1 lists %s", p)
		}
	}
	tree, err = w.ListTree(TreeOptions{MaxEntries: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Entries) != 3 || !tree.Truncated {
		t.Errorf("cap 3: %v truncated=%v", paths(tree), tree.Truncated)
	}
	tree, err = w.ListTree(TreeOptions{Dir: "sub"})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(tree); !slices.Equal(got, []string{"sub/.gitignore", "sub/deep", "sub/root-only.txt", "sub/deep/a.go"}) {
		t.Errorf("sub: %v", got)
	}
	if _, err := w.ListTree(TreeOptions{Dir: "../"}); !errors.Is(err, domain.ErrPermission) {
		t.Errorf("../: %v", err)
	}
}

func TestReadFile(t *testing.T) {
	w, _ := fixtureRepo(t)
	f, err := w.ReadFile("calc.go", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.TotalLines != 5 || f.Truncated || !strings.Contains(f.Content, "func Sub") || f.SHA256 != SHA256([]byte(f.Content)) {
		t.Errorf("whole file: %+v", f)
	}
	part, err := w.ReadFile("calc.go", ReadOptions{StartLine: 3, EndLine: 3})
	if err != nil {
		t.Fatal(err)
	}
	if part.Content != "func Add(a, b int) int { return a + b }\n" || !part.Truncated || part.SHA256 != f.SHA256 {
		t.Errorf("line 3: %+v", part)
	}
	capped, err := w.ReadFile("calc.go", ReadOptions{MaxBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	if capped.Content != "package ca" || !capped.Truncated {
		t.Errorf("capped: %+v", capped)
	}
	bin, err := w.ReadFile("image.png", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bin.Binary || bin.Content != "" || bin.SHA256 == "" {
		t.Errorf("binary: %+v", bin)
	}
	if _, err := w.ReadFile("missing.go", ReadOptions{}); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
}

func TestReadFileRefusesSecretsAndEscapes(t *testing.T) {
	w, dir := fixtureRepo(t)
	outside := filepath.Join(filepath.Dir(dir), "outside-"+filepath.Base(dir))
	if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(outside) })
	if err := os.Symlink(outside, filepath.Join(dir, "link-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("calc.go", filepath.Join(dir, "link-in")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(dir), filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".env", ".env.production", "config/server.pem", ".ssh/id_ed25519",
		"settings/credentials.json", "leaky.txt", "../x", "/etc/passwd", ".git/config", "link-out", "link-in",
		"up/" + filepath.Base(outside)} {
		f, err := w.ReadFile(name, ReadOptions{})
		if err == nil {
			t.Errorf("%s was returned: %q", name, f.Content)
			continue
		}
		if !errors.Is(err, domain.ErrPermission) && !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
		if strings.Contains(err.Error(), fakeKey) || strings.Contains(err.Error(), "TOKEN=abc") {
			t.Errorf("%s: error leaks content: %v", name, err)
		}
	}
	tree, err := w.ListTree(TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths(tree) {
		if strings.HasPrefix(p, "link") || strings.HasPrefix(p, "up") {
			t.Errorf("tree lists the symlink %s", p)
		}
	}
}

func TestSearch(t *testing.T) {
	w, _ := fixtureRepo(t)
	res, err := w.Search(SearchOptions{Query: "Add"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range res.Matches {
		got = append(got, fmt.Sprintf("%s:%d", m.Path, m.Line))
	}
	// leaky.txt holds a key: it is never searched; build/ is ignored.
	if !slices.Equal(got, []string{"calc.go:3", "sub/deep/a.go:2"}) {
		t.Errorf("literal: %v", got)
	}
	res, err = w.Search(SearchOptions{Query: `func (Add|Sub)\(`, Regexp: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 2 || res.Matches[1].Text != "func Sub(a, b int) int { return a - b }" {
		t.Errorf("regexp: %+v", res.Matches)
	}
	res, err = w.Search(SearchOptions{Query: "add", CaseInsensitive: true, MaxMatches: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 1 || !res.Truncated {
		t.Errorf("capped: %+v", res)
	}
	for _, q := range []string{"TOKEN", "PRIVATE KEY", "sk-proj", "built"} {
		res, err := w.Search(SearchOptions{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Matches) != 0 {
			t.Errorf("%q found %+v", q, res.Matches)
		}
	}
	if _, err := w.Search(SearchOptions{Query: "("}); err != nil {
		t.Errorf("a literal paren is fine: %v", err)
	}
	if _, err := w.Search(SearchOptions{Query: "(", Regexp: true}); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("bad regexp: %v", err)
	}
}

func TestGitignorePatterns(t *testing.T) {
	set := parseIgnore("", "*.o\n/top\ndocs/**/draft.md\nnode_modules/\n!important.o\n\\#hash\nsrc/*.gen.go\n")
	ig := ignorer{set}
	tests := []struct {
		path string
		dir  bool
		want bool
	}{
		{"a.o", false, true},
		{"x/y/a.o", false, true},
		{"important.o", false, false},
		{"top", false, true},
		{"x/top", false, false},
		{"docs/draft.md", false, true},
		{"docs/a/b/draft.md", false, true},
		{"node_modules", true, true},
		{"node_modules", false, false},
		{"#hash", false, true},
		{"src/a.gen.go", false, true},
		{"src/x/a.gen.go", false, false},
		{"main.go", false, false},
	}
	for _, tt := range tests {
		if got := ig.ignored(tt.path, tt.dir); got != tt.want {
			t.Errorf("ignored(%q, dir=%v) = %v, want %v", tt.path, tt.dir, got, tt.want)
		}
	}
}
