package domain

import (
	"fmt"
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
