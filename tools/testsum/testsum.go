// Package testsum reads `go test -json` and prints what a person needs from it: the package
// lines go test prints without -v, the whole output of every failed test, and at the end one
// summary line with the tests passed, failed and skipped, and why each skipped one was skipped.
package testsum

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json), as far as used here.
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

// Skip is a skipped test and the reason it gave.
type Skip struct {
	Test, Reason string
}

// Summary is what a run came to.
type Summary struct {
	Passed, Failed, Skipped int
	// FailedPackages counts packages that failed (a failed test, a build failure, a panic).
	FailedPackages int
	Skips          []Skip
}

// OK reports whether nothing failed (and, with noSkips, nothing was skipped).
func (s Summary) OK(noSkips bool) bool {
	return s.Failed == 0 && s.FailedPackages == 0 && (!noSkips || s.Skipped == 0)
}

// Line is the summary line.
func (s Summary) Line() string {
	return fmt.Sprintf("make test: %d passed, %d failed, %d skipped; %d package(s) failed", s.Passed, s.Failed, s.Skipped, s.FailedPackages)
}

// Run copies the run from r to w as described and returns its summary.
func Run(r io.Reader, w io.Writer) (Summary, error) {
	var s Summary
	outputs := map[string][]string{} // package + test → its output lines
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not test2json (go vet's or the linker's own words): pass it on.
			fmt.Fprintln(w, string(line))
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch {
		case e.Action == "build-output":
			fmt.Fprint(w, e.Output)
		case e.Action == "build-fail":
			s.FailedPackages++
		case e.Test == "" && e.Action == "output":
			// The package's own lines: ok/FAIL/no test files, and what a test printed outside any
			// test (a panic in TestMain); the bare PASS of -json mode says nothing more than ok.
			if strings.TrimSpace(e.Output) != "PASS" {
				fmt.Fprint(w, e.Output)
			}
		case e.Test == "" && e.Action == "fail":
			s.FailedPackages++
		case e.Test == "":
			// start, pass, skip (no test files) of a package: its output line says so.
		case e.Action == "output":
			outputs[key] = append(outputs[key], e.Output)
		case e.Action == "pass":
			s.Passed++
			delete(outputs, key)
		case e.Action == "fail":
			s.Failed++
			for _, o := range outputs[key] {
				fmt.Fprint(w, o)
			}
			delete(outputs, key)
		case e.Action == "skip":
			s.Skipped++
			s.Skips = append(s.Skips, Skip{Test: e.Package + "." + e.Test, Reason: skipReason(outputs[key])})
			delete(outputs, key)
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	slices.SortFunc(s.Skips, func(a, b Skip) int { return strings.Compare(a.Test, b.Test) })
	return s, nil
}

// skipReason is what a skipped test said: the lines after its "--- SKIP" line, or its last words.
func skipReason(lines []string) string {
	var said []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		said = append(said, t)
	}
	if len(said) == 0 {
		return "no reason given"
	}
	return strings.Join(said, " ")
}
