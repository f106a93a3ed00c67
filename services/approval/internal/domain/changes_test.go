package domain

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

// The approval message carries the changed lines: a diff's removed and added lines, a new
// file's lines, and a whole-file replacement of unknown content says that every current line
// goes — it never passes as additions only.
func TestRequestTextShowsTheChangedLines(t *testing.T) {
	d := patch.UnifiedDiff("calc.go", "package calc\n\nfunc Add() {}\n\nfunc Sub() {}\n", "package calc\n\nfunc Add() {}\n")
	cmds := fmt.Sprintf(`[{"type":"file_edit","action":"patch","target":"calc.go","content":%q},
		{"type":"file_edit","action":"create","target":"mul.go","content":"package calc\n\nfunc Mul() {} // @channel\n"},
		{"type":"file_edit","action":"update","target":"README.md","content":"# calc\n"}]`, d)
	p := mustParse(t, cmds)
	j := Job{ID: "job_20260301_008", AffectedPaths: p.AffectedPaths, ExpiresAt: t0.Add(time.Hour)}
	ja := RequestText(j, p, nil, time.UTC)
	for _, want := range []string{"変更内容:", "calc.go\n", "  -func Sub() {}\n", "mul.go （新規ファイル）", "  +func Mul() {} // ＠channel\n",
		"README.md\n  ⚠️ ファイル全体を置き換えます", "差分: 3 ファイル, +4 -2"} {
		if !strings.Contains(ja, want) {
			t.Errorf("ja text lacks %q:\n%s", want, ja)
		}
	}
	j.Locale = "en"
	if en := RequestText(j, p, nil, time.UTC); !strings.Contains(en, "Changes:\n") || !strings.Contains(en, "Replaces the whole file") {
		t.Errorf("en text:\n%s", en)
	}
}

func TestChangeLinesStayWithinBudget(t *testing.T) {
	var body strings.Builder
	for i := range 200 {
		fmt.Fprintf(&body, "line %d\n", i)
	}
	var cmds []string
	for i := range 9 {
		cmds = append(cmds, fmt.Sprintf(`{"type":"file_edit","action":"create","target":"f%d.txt","content":%q}`, i, body.String()))
	}
	p := mustParse(t, "["+strings.Join(cmds, ",")+"]")
	got := ChangeLines(p, "en")
	if n := strings.Count(got, "\n  +"); n != changeLinesMax {
		t.Errorf("%d changed lines shown, want %d", n, changeLinesMax)
	}
	for _, want := range []string{fmt.Sprintf("… %d more lines", 6*200-changeLinesMax), "… 3 more files"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if ChangeLines(mustParse(t, `[{"type":"shell_command","action":"run","target":"ls"}]`), "ja") != "" {
		t.Error("a patch without file operations got a changes section")
	}
}

// TestRequestCard: the card holds the same request as the text in parts: title, computed risk,
// summary, the changed lines per file (a cut marked on the last file shown), the facts and the
// console link; model text stays defused.
func TestRequestCard(t *testing.T) {
	d := patch.UnifiedDiff("calc.go", "package calc\n\nfunc Add() {}\n\nfunc Sub() {}\n", "package calc\n\nfunc Add() {}\n")
	cmds := fmt.Sprintf(`[{"type":"file_edit","action":"patch","target":"calc.go","content":%q},
		{"type":"file_edit","action":"create","target":"mul.go","content":"package calc\n\nfunc Mul() {} // @channel\n"}]`, d)
	p := mustParse(t, cmds)
	j := Job{ID: "job_20260301_009", Summary: "掛け算を足す <!here>\n二行目", AffectedPaths: p.AffectedPaths, ExpiresAt: t0.Add(time.Hour)}
	c := RequestCard(j, p, nil, time.UTC, ConsoleLink("https://pc.example/ui/", j.ID))
	if c.JobID != j.ID || c.Title != "🔐 承認リクエスト job_20260301_009" || c.Risk != "medium" || c.RiskText != "リスク: 中" || c.Locale != "ja" {
		t.Fatalf("card %+v", c)
	}
	if len(c.Summary) != 2 || strings.Contains(c.Summary[0], "<!") {
		t.Errorf("summary %q", c.Summary)
	}
	if len(c.Files) != 2 || c.Files[0].Path != "calc.go" || !slices.Contains(c.Files[0].Lines, "-func Sub() {}") ||
		c.Files[1].Note != "（新規ファイル）" || !slices.Contains(c.Files[1].Lines, "+func Mul() {} // ＠channel") {
		t.Errorf("files %+v", c.Files)
	}
	if c.ConsoleURL != "https://pc.example/ui/#/jobs/job_20260301_009" {
		t.Errorf("console %q", c.ConsoleURL)
	}
	facts := strings.Join(c.Facts, "\n")
	for _, want := range []string{"差分: 2 ファイル", "ロールバック: 可能", "有効期限: 2026-03-01"} {
		if !strings.Contains(facts, want) {
			t.Errorf("facts lack %q: %s", want, facts)
		}
	}
	var body strings.Builder
	for i := range 100 {
		fmt.Fprintf(&body, "line %d\n", i)
	}
	long := mustParse(t, fmt.Sprintf(`[{"type":"file_edit","action":"create","target":"big.txt","content":%q}]`, body.String()))
	j.Locale = "en"
	c = RequestCard(j, long, nil, time.UTC, "")
	if c.Locale != "en" || len(c.Files) != 1 || len(c.Files[0].Lines) != changeLinesMax || !strings.Contains(c.Files[0].More, "76 more lines") || c.ConsoleURL != "" {
		t.Errorf("long card %+v", c)
	}
}
