package patch_test

import (
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

const calcGo = `package calc

func Add(a, b int) int { return a + b }

func Sub(a, b int) int { return a - b }
`

func TestUnifiedDiffShowsRemovedLines(t *testing.T) {
	d := patch.UnifiedDiff("calc.go", calcGo, "package calc\n\nfunc Add(a, b int) int { return a + b }\n")
	for _, want := range []string{"--- a/calc.go\n+++ b/calc.go\n", "-func Sub(a, b int) int { return a - b }\n", "@@ -1,5 +1,3 @@"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	if patch.UnifiedDiff("x", "same\n", "same\n") != "" {
		t.Error("equal contents gave a diff")
	}
}

func TestUnifiedDiffMarksAMissingFinalNewline(t *testing.T) {
	d := patch.UnifiedDiff("a.txt", "one\ntwo", "one\ntwo\n")
	want := "-two\n\\ No newline at end of file\n+two\n"
	if !strings.Contains(d, want) {
		t.Fatalf("diff lacks %q:\n%s", want, d)
	}
}

func TestDiffUpdatesCountsTheLinesAWholeFileRewriteRemoves(t *testing.T) {
	text := `[{"type":"file_edit","action":"update","target":"calc.go","content":"package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Mul(a, b int) int { return a * b }\n"},
	{"type":"file_edit","action":"update","target":"new_elsewhere.go","content":"package calc\n"},
	{"type":"shell_command","action":"run","target":"go test ./..."}]`
	before, err := patch.Parse(text, patch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if before.Stats.Deletions != 0 {
		t.Fatalf("premise: a whole-file update counts no deletions, got %+v", before.Stats)
	}
	out, err := patch.DiffUpdates(text, map[string]string{"calc.go": calcGo}, patch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := patch.Parse(out, patch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Operations[0]; got.Action != patch.ActionPatch || !strings.Contains(got.Content, "-func Sub(a, b int) int { return a - b }") {
		t.Fatalf("update of a known file not rewritten as its diff: %+v", got)
	}
	if got := p.Operations[1]; got.Action != patch.ActionUpdate {
		t.Fatalf("update of a file without known content was rewritten: %+v", got)
	}
	if p.Operations[2].Type != patch.TypeShell || len(p.Operations) != 3 {
		t.Fatalf("other operations changed: %+v", p.Operations)
	}
	if p.Stats.Deletions != 1 || p.Stats.Additions != 2 {
		t.Fatalf("stats %+v, want the removed Sub line counted (+2 -1 on calc.go, +1 new file)", p.Stats)
	}
}

func TestDiffUpdatesLeavesTextAloneWhenNothingChanges(t *testing.T) {
	text := `[{"type":"file_edit","action":"update","target":"calc.go","content":"x\n"}]`
	for name, cur := range map[string]map[string]string{"unknown file": {"other.go": "y\n"}, "same content": {"calc.go": "x\n"}} {
		out, err := patch.DiffUpdates(text, cur, patch.Options{})
		if err != nil || out != text {
			t.Errorf("%s: got %q, %v; want the text unchanged", name, out, err)
		}
	}
}

// A diff of a Markdown file whose context holds a code fence is a diff, not Markdown; a
// fence around a diff is still Markdown.
func TestDiffWithFenceLinesIsADiff(t *testing.T) {
	readme := "# calc\n\n```sh\ngo test ./...\n```\n\nUsage below.\n"
	d := patch.UnifiedDiff("README.md", readme, strings.Replace(readme, "Usage below.", "Usage: see docs/usage.md.", 1))
	if !strings.Contains(d, "\n ```\n") {
		t.Fatalf("premise: the context holds a fence line:\n%s", d)
	}
	p, err := patch.Parse(d, patch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != patch.FormatDiff || len(p.Operations) != 1 || p.Operations[0].Target != "README.md" || len(p.Unknown) != 0 {
		t.Fatalf("parsed as %s with %d operations, unknown %v", p.Format, len(p.Operations), p.Unknown)
	}
	// Inside Markdown the fence must be longer than the fences it holds, as CommonMark says.
	fenced := "````diff\n" + d + "````\n"
	if p, err := patch.Parse(fenced, patch.Options{}); err != nil || p.Format != patch.FormatMarkdown {
		t.Fatalf("a fenced diff: %v, %v", p, err)
	}
}
