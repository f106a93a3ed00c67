package patch

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// diffContext is how many unchanged lines surround each change in a generated diff.
const diffContext = 3

// UnifiedDiff renders the change from old to new content of path as a unified diff with
// ---/+++ headers (a/ and b/ prefixes), marking a last line without a newline the way git
// does. It returns "" when the contents are equal.
func UnifiedDiff(path, old, new string) string {
	if old == new {
		return ""
	}
	a, b := splitKeep(old), splitKeep(new)
	m := difflib.NewMatcher(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", path, path)
	for _, group := range m.GetGroupedOpCodes(diffContext) {
		first, last := group[0], group[len(group)-1]
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(first.I1, last.I2), hunkRange(first.J1, last.J2))
		for _, c := range group {
			if c.Tag == 'e' {
				writeLines(&out, ' ', a[c.I1:c.I2])
				continue
			}
			if c.Tag == 'r' || c.Tag == 'd' {
				writeLines(&out, '-', a[c.I1:c.I2])
			}
			if c.Tag == 'r' || c.Tag == 'i' {
				writeLines(&out, '+', b[c.J1:c.J2])
			}
		}
	}
	return out.String()
}

// splitKeep splits s into lines that keep their "\n" (the last one may lack it), so a missing
// final newline is a difference of that line.
func splitKeep(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func writeLines(b *strings.Builder, prefix byte, lines []string) {
	for _, l := range lines {
		b.WriteByte(prefix)
		b.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			b.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange is a unified diff range for lines [i1, i2) (0-based): "start,count", with the
// start of an empty range naming the line before it.
func hunkRange(i1, i2 int) string {
	n := i2 - i1
	switch {
	case n == 0:
		return fmt.Sprintf("%d,0", i1)
	case n == 1:
		return fmt.Sprintf("%d", i1+1)
	}
	return fmt.Sprintf("%d,%d", i1+1, n)
}
