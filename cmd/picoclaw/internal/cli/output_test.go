package cli

import (
	"strings"
	"testing"
)

// A table's columns start where its header's do on a terminal, with Japanese (two columns a
// character) in the header or in a cell.
func TestTableLinesUpWideCharacters(t *testing.T) {
	var b strings.Builder
	err := table(&b, header("ja", txtJobsHeader), [][]string{
		{"job_20261128_001", "pending", "CODE", "11-28 10:00", "README を直す"},
		{"job_20261128_002", "approved", "PLAN", "11-28 10:01", "summary"},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ジョブ") {
		t.Fatalf("table:\n%s", b.String())
	}
	// The display column where each line's n-th cell starts: after two spaces or more (a cell
	// may hold one, as the time does).
	starts := func(line string) []int {
		cols := []int{0}
		col, spaces := 0, 0
		for _, r := range line {
			if r != ' ' && spaces >= 2 {
				cols = append(cols, col)
			}
			if r == ' ' {
				spaces++
			} else {
				spaces = 0
			}
			col += displayWidth(string(r))
		}
		return cols
	}
	head := starts(lines[0])
	for _, l := range lines[1:] {
		got := starts(l)
		if len(got) != len(head) {
			t.Fatalf("row %q has %d cells, the header %d", l, len(got), len(head))
		}
		for i := range head {
			if got[i] != head[i] {
				t.Fatalf("cell %d of %q starts at column %d, its header at %d:\n%s", i, l, got[i], head[i], b.String())
			}
		}
	}
	if w := displayWidth("ジョブ ok"); w != 9 {
		t.Fatalf("displayWidth = %d, want 9", w)
	}
}

// Every table header has as many cells in Japanese as in English.
func TestTableHeadersHaveOneCellPerColumnInBothLanguages(t *testing.T) {
	for _, code := range []string{txtJobsHeader, txtImagesHeader, txtDeadLettersHeader} {
		if ja, en := header("ja", code), header("en", code); len(ja) != len(en) || ja[0] == en[0] && code != txtDeadLettersHeader {
			t.Errorf("%s: ja %q, en %q", code, ja, en)
		}
	}
}
