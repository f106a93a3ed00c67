package testsum

import (
	"strings"
	"testing"
)

const run = `{"Action":"start","Package":"example.com/a"}
{"Action":"run","Package":"example.com/a","Test":"TestOK"}
{"Action":"output","Package":"example.com/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"example.com/a","Test":"TestOK"}
{"Action":"run","Package":"example.com/a","Test":"TestBad"}
{"Action":"output","Package":"example.com/a","Test":"TestBad","Output":"    a_test.go:9: want 2, got 3\n"}
{"Action":"output","Package":"example.com/a","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"example.com/a","Test":"TestBad"}
{"Action":"run","Package":"example.com/a","Test":"TestNeedsRedis"}
{"Action":"output","Package":"example.com/a","Test":"TestNeedsRedis","Output":"    a_test.go:20: no Redis (set PICOCLAW_TEST_REDIS_ADDR)\n"}
{"Action":"output","Package":"example.com/a","Test":"TestNeedsRedis","Output":"--- SKIP: TestNeedsRedis (0.00s)\n"}
{"Action":"skip","Package":"example.com/a","Test":"TestNeedsRedis"}
{"Action":"output","Package":"example.com/a","Output":"FAIL\texample.com/a\t0.01s\n"}
{"Action":"fail","Package":"example.com/a"}
{"ImportPath":"example.com/b","Action":"build-output","Output":"b.go:3:1: syntax error\n"}
{"ImportPath":"example.com/b","Action":"build-fail"}
{"Action":"output","Package":"example.com/c","Output":"ok  \texample.com/c\t0.02s\n"}
{"Action":"pass","Package":"example.com/c"}
go: some words that are not json
`

func TestRunReportsFailuresSkipsAndTheSummary(t *testing.T) {
	var out strings.Builder
	s, err := Run(strings.NewReader(run), &out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Passed != 1 || s.Failed != 1 || s.Skipped != 1 || s.FailedPackages != 2 {
		t.Fatalf("summary %+v", s)
	}
	got := out.String()
	for _, want := range []string{"want 2, got 3", "--- FAIL: TestBad", "FAIL\texample.com/a", "b.go:3:1: syntax error",
		"ok  \texample.com/c", "go: some words that are not json"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "=== RUN   TestOK") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
	if len(s.Skips) != 1 || s.Skips[0].Test != "example.com/a.TestNeedsRedis" || !strings.Contains(s.Skips[0].Reason, "no Redis") {
		t.Errorf("skips %+v", s.Skips)
	}
	if s.OK(false) || s.Line() != "make test: 1 passed, 1 failed, 1 skipped; 2 package(s) failed" {
		t.Errorf("OK %v, line %q", s.OK(false), s.Line())
	}
}

func TestSkipsFailOnlyWhenAskedTo(t *testing.T) {
	s := Summary{Passed: 3, Skipped: 1}
	if !s.OK(false) || s.OK(true) {
		t.Fatalf("OK(false)=%v OK(true)=%v", s.OK(false), s.OK(true))
	}
}
