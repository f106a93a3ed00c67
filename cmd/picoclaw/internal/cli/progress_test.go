package cli

import (
	"bytes"
	"testing"
)

func TestBar(t *testing.T) {
	for _, tc := range []struct {
		done, total int64
		want        string
	}{
		{0, 4, "x [░░░░░░░░] 0/4 rows"},
		{1, 4, "x [██░░░░░░] 1/4 rows"},
		{4, 4, "x [████████] 4/4 rows"},
		{9, 4, "x [████████] 4/4 rows"},
		{0, 0, "x [░░░░░░░░] 0/1 rows"},
	} {
		if got := bar("x", tc.done, tc.total, "rows", 8); got != tc.want {
			t.Errorf("bar(%d/%d) = %q, want %q", tc.done, tc.total, got, tc.want)
		}
	}
}

// Off a terminal nothing is drawn: scripts and logs see only results.
func TestProgressOnlyOnATerminal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, "export", 10, "rows")
	if p != nil {
		t.Fatal("a progress bar on a buffer")
	}
	p.Add(5)
	p.Label("more")
	p.Done()
	if buf.Len() != 0 {
		t.Fatalf("drawn off a terminal: %q", buf.String())
	}
}
