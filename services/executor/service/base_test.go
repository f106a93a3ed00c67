package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

const calcV1 = "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b }\n\n// Mul is next.\n"

const calcDiff = "diff --git a/calc.go b/calc.go\n--- a/calc.go\n+++ b/calc.go\n@@ -1,3 +1,3 @@\n package calc\n \n-func Add(a, b int) int { return a + b }\n+func Add(a, b int) int { return b + a }\n"

func boundPatch(t *testing.T, text string, base map[string]string) string {
	t.Helper()
	out, err := patch.BindBase(text, base, patch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A patch bound to the content it was written against runs while that content is unchanged,
// and is refused — nothing written, the refusal recorded — once the file changed, even far
// from the hunk.
func TestPatchBoundToItsBase(t *testing.T) {
	s := start(t, nil)
	calc := filepath.Join(s.ws, "calc.go")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(calc, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()

	write(calcV1)
	s.addJob(t, "job_20260101_301", boundPatch(t, calcDiff, map[string]string{"calc.go": sum(calcV1)}), approvalv1.JobStatus_JOB_STATUS_GRANTED)
	res, err := s.client.Execute(ctx, &executorv1.ExecuteRequest{JobId: "job_20260101_301"})
	if err != nil || !res.GetResult().GetSuccess() {
		t.Fatalf("unchanged base: %v %v", res, err)
	}
	if !strings.Contains(readFile(t, calc), "return b + a") {
		t.Fatal("diff not applied")
	}

	cases := []struct {
		id, text string
		base     map[string]string
	}{
		// A diff whose hunk would still apply after an edit at the end of the file.
		{"job_20260101_302", calcDiff, map[string]string{"calc.go": sum(calcV1)}},
		// A whole-file update written against the old content.
		{"job_20260101_303", "```go:calc.go\npackage calc\n\nfunc Add(a, b int) int { return a + b }\n```\n", map[string]string{"calc.go": sum(calcV1)}},
		// A file the proposal meant to create appeared meanwhile.
		{"job_20260101_304", "```go:mul.go\npackage calc\n```\n", map[string]string{"mul.go": patch.BaseAbsent}},
	}
	write(calcV1)
	for _, c := range cases {
		s.addJob(t, c.id, boundPatch(t, c.text, c.base), approvalv1.JobStatus_JOB_STATUS_GRANTED)
	}
	edited := calcV1 + "func Mul(a, b int) int { return a * b }\n"
	write(edited)
	if err := os.WriteFile(filepath.Join(s.ws, "mul.go"), []byte("package calc // by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		for _, dry := range []bool{true, false} {
			// The refusal speaks the user's language: English for the dry run here, Japanese (the default) otherwise.
			locale, said := "", "何も書き込んでいません"
			if dry {
				locale, said = "en", "nothing was written"
			}
			_, err := s.client.Execute(ctx, &executorv1.ExecuteRequest{JobId: c.id, DryRun: dry, Locale: locale})
			if codeOf(err) != connect.CodeFailedPrecondition {
				t.Fatalf("%s dry=%v: %v, want FailedPrecondition", c.id, dry, err)
			}
			target := "calc.go"
			if c.base["mul.go"] != "" {
				target = "mul.go"
			}
			if msg := userText(err); !strings.Contains(msg, target) || !strings.Contains(msg, "/retry "+c.id) || !strings.Contains(msg, said) {
				t.Errorf("%s: the refusal does not name the file and the next step: %q (%v)", c.id, msg, err)
			}
		}
		if got := readFile(t, calc); got != edited {
			t.Fatalf("%s wrote calc.go: %q", c.id, got)
		}
		if evs := s.executorEvents(t, c.id); countOf(evs, "execution_refused") != 1 || countOf(evs, "execution_started") != 0 {
			t.Errorf("%s events = %v", c.id, evs)
		}
	}
	if got := readFile(t, filepath.Join(s.ws, "mul.go")); got != "package calc // by hand\n" {
		t.Fatalf("mul.go overwritten: %q", got)
	}
}
