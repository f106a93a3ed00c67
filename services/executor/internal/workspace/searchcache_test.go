package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestRequiredLiterals(t *testing.T) {
	for expr, want := range map[string][]string{
		`\b(Sub|F42|helper43)\b`: {"Sub", "F42", "helper43"},
		`func (Add|Sub)\(`:       {"func "},
		`foo.*bar`:               {"foo"},
		`x+`:                     {"x"},
		`(?i)add`:                nil, // case folded: no byte literal is required
		`a|.*`:                   nil, // one branch needs nothing
		`[ab]c`:                  {"c"},
	} {
		var got []string
		for _, l := range requiredLiterals(expr) {
			got = append(got, string(l))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", expr, got, want)
		}
	}
}

// A file edited after a search is searched with its new content: the cache is checked against
// the file's stamp at every use.
func TestSearchSeesEditsOfCachedFiles(t *testing.T) {
	w, dir := open(t, map[string]string{"a.go": "package a\n\nfunc Old() {}\n"})
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "a.go"), past, past); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * stampSettle) // let the ctime of Chtimes settle too, so the content is cached
	search := func(q string) int {
		res, err := w.Search(SearchOptions{Query: q, Regexp: true})
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Matches)
	}
	if search(`func Old\(`) != 1 {
		t.Fatal("premise: Old found")
	}
	if _, ok := w.cache.files["a.go"]; !ok {
		t.Fatal("premise: the content was cached")
	}
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc New() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "a.go"), past, past); err != nil { // same mtime as before
		t.Fatal(err)
	}
	if search(`func Old\(`) != 0 || search(`func New\(`) != 1 {
		t.Fatal("the search answered from the old content")
	}
}

// A listing with a search along gives the same answers as the two calls apart — the search
// reaching below the listing's depth and past its entry cap.
func TestListTreeWithSearchMatchesTheTwoCalls(t *testing.T) {
	files := map[string]string{".gitignore": "*.log\n", "x.log": "needle\n", ".env": "needle=1\n"}
	for i := range 30 {
		files[fmt.Sprintf("d%d/e/f%02d.go", i%3, i)] = fmt.Sprintf("package p\n// needle %d\n", i)
	}
	w, _ := open(t, files)
	q := SearchOptions{Query: `needle \d+`, Regexp: true, MaxMatches: 100}
	for _, o := range []TreeOptions{{MaxEntries: 1000, MaxDepth: 64}, {MaxEntries: 5, MaxDepth: 64}, {MaxEntries: 1000, MaxDepth: 1}} {
		alone, err := w.ListTree(o)
		if err != nil {
			t.Fatal(err)
		}
		searched, err := w.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		o.Search = &q
		both, err := w.ListTree(o)
		if err != nil || both.Search == nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if fmt.Sprint(both.Entries, both.Truncated, both.Withheld) != fmt.Sprint(alone.Entries, alone.Truncated, alone.Withheld) {
			t.Errorf("%+v: listing %v, alone %v", o, both.Entries, alone.Entries)
		}
		if fmt.Sprint(both.Search.Matches) != fmt.Sprint(searched.Matches) || len(searched.Matches) != 30 {
			t.Errorf("%+v: search %d matches, alone %d", o, len(both.Search.Matches), len(searched.Matches))
		}
	}
}
