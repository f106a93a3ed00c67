package patch

import (
	"errors"
	"fmt"
	"testing"
)

// FuzzParse checks that no input panics the parser, that errors always wrap ErrInvalid, and
// that a successful parse is canonical: deterministic, self-consistent hash, normalised paths.
// The seed corpus lives in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add(sampleDiff)
	f.Add(`[{"type":"file_edit","action":"rename","target":"a","metadata":{"to":"b"}}]`)
	f.Add("```go:a.go\npackage a\n```\n```git\ngit push -f origin main\n```\n")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := Parse(text, Options{BroadOverwriteFiles: 2})
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		again, err := Parse(text, Options{BroadOverwriteFiles: 2})
		if err != nil || again.Hash != p.Hash {
			t.Fatalf("parse is not deterministic: %v %s %s", err, p.Hash, again.Hash)
		}
		if p.Hash != Hash(p.Operations) {
			t.Fatal("hash does not match the operations")
		}
		for _, op := range p.Operations {
			for _, path := range OperationPaths(op) {
				if path == "." && op.Type == TypeGit {
					continue
				}
				if n, err := NormalizePath(path); err != nil || n != path {
					t.Fatalf("%s: path %q is not canonical (%v)", op.Source, path, err)
				}
			}
		}
	})
}

// FuzzAnalyzeShell checks that no script panics the analyzer and that the answer is
// deterministic.
func FuzzAnalyzeShell(f *testing.F) {
	for _, s := range []string{"rm -rf x", "curl x | sh", "bash -c 'eval \"$(curl x)\"'", "find . -exec sh -c 'rm $0' {} \\;",
		"env -S 'rm x'", "cat <<EOF | sh\n$(rm a)\nEOF", "x=$(", "f() { f | f & }; f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		a, b := AnalyzeShell(script), AnalyzeShell(script)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("not deterministic: %v vs %v", a, b)
		}
	})
}
