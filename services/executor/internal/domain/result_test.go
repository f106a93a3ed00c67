package domain

import (
	"strings"
	"testing"
	"time"
)

func TestResultText(t *testing.T) {
	r := Result{JobID: "job_20260101_001", Commands: []CommandResult{
		{Type: "file_edit", Action: "create", Target: "a.txt", Success: true, Duration: 12 * time.Millisecond},
		{Type: "shell_command", Action: "run", Target: "false", Error: "exit status 1", ErrorCode: CodeExitStatus, ErrorArgs: []string{"1"},
			Duration: 3 * time.Millisecond, OutputTruncated: true},
		{Type: "shell_command", Action: "run", Target: "echo never", Skipped: true},
	}, CommitHash: "abc123", RolledBack: true, RestoredPaths: []string{"a.txt"},
		RollbackError: "some files could not be restored: restore b.txt: permission denied", RollbackFailure: Failure{Code: CodeRollbackIncomplete},
		CommitError: "git commit failed: exit status 128", CommitFailure: Failure{Code: CodeCommitStep, Args: []string{"git commit"}}}
	r.Tally()
	if r.Success || r.Executed != 2 || r.Succeeded != 1 || r.Failed != 1 || r.Skipped != 1 {
		t.Fatalf("tally = %+v", r)
	}
	tests := []struct {
		loc  Locale
		want []string
	}{
		{LocaleJA, []string{"実行に失敗しました [job_20260101_001]", "実行: 2 件, 成功: 1 件, 失敗: 1 件, スキップ: 1 件",
			"✓ [1] file_edit create a.txt (12ms)", "✗ [2] shell_command run false (3ms)", "    エラー: 終了コード 1 で終了しました",
			"（出力は上限で切り詰められました）", "- [3] shell_command run echo never (0ms) スキップ", "ロールバック済み: a.txt", "Git コミット: abc123",
			"ロールバックエラー: 一部のファイルを元に戻せませんでした", "自動コミットに失敗しました: git commit に失敗しました"}},
		{LocaleEN, []string{"Execution failed [job_20260101_001]", "Executed: 2, succeeded: 1, failed: 1, skipped: 1",
			"✓ [1] file_edit create a.txt (12ms)", "    error: exit status 1", "(output was cut at the size limit)",
			"skipped", "Rolled back: a.txt", "Git commit: abc123", "Rollback error: some files could not be restored",
			"Auto-commit failed: git commit failed"}},
	}
	for _, tt := range tests {
		got := r.Text(tt.loc)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s text lacks %q:\n%s", tt.loc, w, got)
			}
		}
		// The English words beneath (an OS error, git's status) are for the log.
		if strings.Contains(got, "permission denied") || strings.Contains(got, "128") {
			t.Errorf("%s text shows the words beneath a failure:\n%s", tt.loc, got)
		}
	}
	// A failure recorded without a message (a record from an older executor) is not shown in
	// English inside Japanese.
	old := Result{Commands: []CommandResult{{Type: "shell_command", Action: "run", Target: "x", Error: "exit status 3"}}}
	old.Tally()
	if got := old.Text(LocaleJA); strings.Contains(got, "exit status") || !strings.Contains(got, "エラー: 予期しないエラーが起きました") {
		t.Errorf("an old record's failure in Japanese:\n%s", got)
	}
}

func TestSummaryOnSuccess(t *testing.T) {
	r := Result{Commands: []CommandResult{{Success: true}, {Success: true}}}
	r.Tally()
	if got, want := r.Summary(LocaleJA), "実行: 2 件, 成功: 2 件, 失敗: 0 件"; got != want {
		t.Fatalf("summary = %q, want %q", got, want)
	}
	if !strings.HasPrefix(r.Text(ParseLocale("", "ja")), "実行完了") || !strings.HasPrefix(r.Text(ParseLocale("EN", "ja")), "Execution completed") {
		t.Fatal("locale selection")
	}
}
