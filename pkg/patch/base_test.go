package patch

import (
	"errors"
	"strings"
	"testing"
)

func TestBindBaseKeepsOperationsAndBindsTheHash(t *testing.T) {
	h := strings.Repeat("ab", 32)
	for name, text := range map[string]string{
		"diff":     "diff --git a/calc.go b/calc.go\n--- a/calc.go\n+++ b/calc.go\n@@ -1,2 +1,2 @@\n package calc\n-x\n+y\n",
		"markdown": "```go:calc.go\npackage calc\n```\n",
		"json":     `[{"type":"file_edit","action":"update","target":"calc.go","content":"package calc\n"},{"type":"shell_command","action":"run","target":"go test ./..."}]`,
	} {
		t.Run(name, func(t *testing.T) {
			orig, err := Parse(text, Options{})
			if err != nil {
				t.Fatal(err)
			}
			bound, err := BindBase(text, map[string]string{"calc.go": h, "other.go": BaseAbsent}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			p, err := Parse(bound, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := Bases(p); len(got) != 1 || got["calc.go"] != h {
				t.Fatalf("bases = %v", got)
			}
			if p.Hash == orig.Hash {
				t.Fatal("the base is not part of the hash")
			}
			if len(p.Operations) != len(orig.Operations) || p.Stats != orig.Stats {
				t.Fatalf("operations or stats changed: %+v vs %+v", p.Stats, orig.Stats)
			}
			for i, op := range p.Operations {
				if op.Content != orig.Operations[i].Content || op.Target != orig.Operations[i].Target {
					t.Errorf("op %d changed", i)
				}
			}
			// Another base is another approval.
			other, err := BindBase(text, map[string]string{"calc.go": strings.Repeat("cd", 32)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if q, _ := Parse(other, Options{}); q.Hash == p.Hash {
				t.Fatal("two bases hash alike")
			}
		})
	}
}

func TestBindBaseRefusesBadValuesAndLeavesUnboundText(t *testing.T) {
	text := "```go:calc.go\npackage calc\n```\n"
	if _, err := BindBase(text, map[string]string{"calc.go": "sha256:nothex"}, Options{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad base: %v", err)
	}
	same, err := BindBase(text, map[string]string{"x.go": BaseAbsent}, Options{})
	if err != nil || same != text {
		t.Fatalf("unbound text changed: %q %v", same, err)
	}
}
