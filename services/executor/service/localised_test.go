package service

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
)

// TestUserTextsAreLocalised: what the executor tells the user is in the request's language —
// a command's failure in the result text (our framing; the command's own output is left as it
// is), its refusal of a job, and approval's refusal of the claim, passed on — while the result
// keeps the failure's stable code and English text for the audit log.
func TestUserTextsAreLocalised(t *testing.T) {
	s := start(t, nil)
	if err := os.WriteFile(filepath.Join(s.ws, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mismatch := "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-three\n+four\n"
	ctx := context.Background()
	for _, tc := range []struct {
		id, patch, locale, code string
		args                    []string
		want, english           string
	}{
		{"job_20260101_401", "```bash\necho oops >&2; exit 3\n```\n", "ja", "EXIT_STATUS", []string{"3"}, "エラー: 終了コード 3 で終了しました", "exit status 3"},
		{"job_20260101_402", "```bash\necho oops >&2; exit 3\n```\n", "en", "EXIT_STATUS", []string{"3"}, "error: exit status 3", "exit status 3"},
		{"job_20260101_403", mismatch, "", "DIFF_CONTEXT_MISMATCH", []string{"a.txt"}, "エラー: 差分を a.txt に適用できません（前後の行が一致しません）", "diff does not apply to a.txt (context mismatch)"},
		{"job_20260101_404", mismatch, "en", "DIFF_CONTEXT_MISMATCH", []string{"a.txt"}, "error: diff does not apply to a.txt (context mismatch)", "diff does not apply to a.txt (context mismatch)"},
	} {
		s.addJob(t, tc.id, tc.patch, approvalv1.JobStatus_JOB_STATUS_GRANTED)
		res, err := s.client.Execute(ctx, &executorv1.ExecuteRequest{JobId: tc.id, Locale: tc.locale})
		if err != nil {
			t.Fatalf("%s: %v", tc.id, err)
		}
		text := res.GetResultText()
		if !strings.Contains(text, tc.want) {
			t.Errorf("%s (%q): result text lacks %q:\n%s", tc.id, tc.locale, tc.want, text)
		}
		if tc.locale != "en" && (strings.Contains(text, "exit status") || strings.Contains(text, "context mismatch") || strings.Contains(text, "error:")) {
			t.Errorf("%s: English in the Japanese result:\n%s", tc.id, text)
		}
		c := res.GetResult().GetCommands()[0]
		if c.GetErrorCode() != tc.code || !slices.Equal(c.GetErrorArgs(), tc.args) || !strings.Contains(c.GetError(), tc.english) {
			t.Errorf("%s: command failure %q %v %q", tc.id, c.GetErrorCode(), c.GetErrorArgs(), c.GetError())
		}
		if strings.Contains(c.GetOutput(), "oops") != strings.Contains(tc.patch, "oops") {
			t.Errorf("%s: the command's own output is not kept as it is: %q", tc.id, c.GetOutput())
		}
	}

	// Refusals: the executor's own (a dry run of a job that is not approved) and approval's
	// refusal of the claim, which the executor passes on as approval said it.
	s.addJob(t, "job_20260101_405", "```bash\necho hi\n```\n", approvalv1.JobStatus_JOB_STATUS_PENDING)
	for _, tc := range []struct {
		dry              bool
		locale, want     string
		english, notWant string
	}{
		{true, "ja", "ジョブ job_20260101_405 は承認待ちのため実行できません（承認されていません）", "job job_20260101_405 is pending, not approved", "pending"},
		{true, "en", "job job_20260101_405 is pending, not approved", "job job_20260101_405 is pending, not approved", "承認"},
		{false, "ja", "ジョブ job_20260101_405 は承認待ちのため実行できません（承認されていません）", "job job_20260101_405 is pending, not approved", "pending"},
		{false, "en", "job job_20260101_405 is pending, not approved", "job job_20260101_405 is pending, not approved", "承認"},
	} {
		_, err := s.client.Execute(ctx, &executorv1.ExecuteRequest{JobId: "job_20260101_405", Locale: tc.locale, DryRun: tc.dry})
		if codeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("dry=%v %s: %v", tc.dry, tc.locale, err)
		}
		if got := userText(err); got != tc.want || strings.Contains(got, tc.notWant) {
			t.Errorf("dry=%v %s: the user is told %q, want %q", tc.dry, tc.locale, got, tc.want)
		}
		if !strings.Contains(err.Error(), tc.english) {
			t.Errorf("dry=%v %s: the error for logs is %q", tc.dry, tc.locale, err)
		}
	}
}
