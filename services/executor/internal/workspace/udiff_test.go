package workspace

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

// The diff a whole-file update is rewritten into (patch.UnifiedDiff) applies here to exactly
// the new content: edits at the start, middle and end, files without a final newline, and
// random edits.
func TestGeneratedDiffsApplyToExactlyTheNewContent(t *testing.T) {
	cases := map[string][2]string{
		"drop a function":        {"package calc\n\nfunc Add() {}\n\nfunc Sub() {}\n", "package calc\n\nfunc Add() {}\n"},
		"change first line":      {"a\nb\nc\n", "A\nb\nc\n"},
		"gain a final newline":   {"a\nb", "a\nb\n"},
		"lose the final newline": {"a\nb\n", "a\nb"},
		"no newline either side": {"a\nb", "a\nc"},
		"emptied":                {"a\nb\n", ""},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 40 {
		var old []string
		for j := range 5 + rng.IntN(60) {
			old = append(old, fmt.Sprintf("line %d", j))
		}
		edited := append([]string(nil), old...)
		for range 1 + rng.IntN(6) {
			k := rng.IntN(len(edited))
			switch rng.IntN(3) {
			case 0:
				edited = append(edited[:k], edited[k+1:]...)
			case 1:
				edited = append(edited[:k], append([]string{fmt.Sprintf("new %d", rng.IntN(1000))}, edited[k:]...)...)
			default:
				edited[k] = "changed " + edited[k]
			}
			if len(edited) == 0 {
				edited = []string{"only"}
			}
		}
		cases[fmt.Sprintf("random %d", i)] = [2]string{strings.Join(old, "\n") + "\n", strings.Join(edited, "\n") + "\n"}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			w, dir := open(t, map[string]string{"f.go": c[0]})
			if _, err := Apply(w.Disk(), diff("f.go", patch.UnifiedDiff("f.go", c[0], c[1]))); err != nil {
				t.Fatalf("%v\n%s", err, patch.UnifiedDiff("f.go", c[0], c[1]))
			}
			b, err := os.ReadFile(filepath.Join(dir, "f.go"))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c[1] {
				t.Fatalf("applied %q, want %q", b, c[1])
			}
		})
	}
}
