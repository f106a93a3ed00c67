package domain

import (
	"slices"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
)

// TestEveryText lists every text approval can put in front of a user — the refusal of a
// decision, an Auto-Approve change, a request or a claim — in Japanese and English. A code added
// to Texts must be added here (and a code here must be in Texts).
func TestEveryText(t *testing.T) {
	if err := Texts.Check(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		code   string
		args   []any
		ja, en string
	}{
		{CodeExpired, []any{"job_20260101_001", "2026-01-01T10:30:00Z"},
			"ジョブ job_20260101_001 は 2026-01-01T10:30:00Z に期限切れになりました",
			"job job_20260101_001 expired at 2026-01-01T10:30:00Z"},
		{CodeAlreadyDecided, []any{"job_20260101_001", fault.Term(fault.StateDenied)},
			"ジョブ job_20260101_001 はすでに却下済みです",
			"job job_20260101_001 is already denied"},
		{CodeCostInChat, []any{"job_20260101_001"},
			"job_20260101_001 はコストの確認です。依頼したチャットで答えてください（/approve job_20260101_001）",
			"job_20260101_001 is a cost confirmation: answer it in the chat that asked (/approve job_20260101_001)"},
		{CodeNoApprover, []any{},
			"承認者が分かりません",
			"no approver identity"},
		{CodeBotCannotDecide, []any{`"Ubot"`},
			"ボット（\"Ubot\"）は承認できません",
			"the bot identity \"Ubot\" cannot approve"},
		{CodeNotApprover, []any{"line:Ustranger"},
			"line:Ustranger は承認者ではありません",
			"line:Ustranger is not an approver"},
		{CodeSimilarTooShort, []any{"30s"},
			"同種の承認の期間は 1m 以上にしてください（指定: 30s）",
			"approve similar: the time must be at least 1m, got 30s"},
		{CodeSimilarTooLong, []any{"48h0m0s", "24h0m0s"},
			"同種の承認の期間 48h0m0s は上限 24h0m0s を超えています",
			"approve similar: the time 48h0m0s exceeds the maximum 24h0m0s"},
		{CodeSimilarDisabled, []any{},
			"設定で Auto-Approve が無効なため（approval.auto_approve.enabled）、同種の承認もできません",
			"Auto-Approve is disabled by configuration (approval.auto_approve.enabled), so approve similar is too"},
		{CodeSimilarCost, []any{"job_20260101_001"},
			"job_20260101_001 はコストの確認です。単独で承認してください（/approve job_20260101_001）。同種の承認はできません",
			"job_20260101_001 is a cost confirmation: approve it alone (/approve job_20260101_001); nothing similar can be allowed from it"},
		{CodeSimilarGrantOn, []any{"grant_0123abcd", "job_20260101_001"},
			"Auto-Approve が有効です（grant_0123abcd）。job_20260101_001 を単独で承認するか、先に Auto-Approve を止めてください",
			"Auto-Approve is on (grant grant_0123abcd); approve job_20260101_001 alone, or switch Auto-Approve off first"},
		{CodeSimilarNotStored, []any{"job_20260101_001"},
			"job_20260101_001 は承認しましたが、同種のジョブの承認を記録できませんでした",
			"job_20260101_001 is approved, but the grant for similar jobs could not be recorded"},
		{CodeSimilarNothing, []any{"job_20260101_001"},
			"job_20260101_001 の操作はどれも常に承認が必要なもの（削除・リネーム・push・ブラウザ・シェル・機密など）で、同種として許可できるものがありません",
			"job_20260101_001 has only operations that always need approval (delete, rename, push, browser, shell, secrets …): nothing to allow as similar"},
		{CodeSimilarNoPath, []any{"job_20260101_001"},
			"job_20260101_001 はワークスペースのパスに触れないため、範囲を決められません",
			"job_20260101_001 touches no workspace path to scope a grant to"},
		{CodeAutoDisabled, []any{},
			"設定で Auto-Approve が無効です（approval.auto_approve.enabled）",
			"Auto-Approve is disabled by configuration (approval.auto_approve.enabled)"},
		{CodeTTLNegative, []any{},
			"ttl は正の値にしてください",
			"ttl must be positive"},
		{CodeTTLTooLong, []any{"48h0m0s", "24h0m0s"},
			"ttl 48h0m0s は上限 24h0m0s を超えています（approval.auto_approve.max_ttl）",
			"ttl 48h0m0s exceeds the maximum 24h0m0s (approval.auto_approve.max_ttl)"},
		{CodeTTLTooShort, []any{},
			"ttl は 1s 以上にしてください",
			"ttl must be at least 1s"},
		{CodeUnknownValue, []any{fault.Term(TermTaskType), `"everything"`, "design, codegen, review, refactor, ops, docs"},
			"タスク種別 \"everything\" は使えません（使えるもの: design, codegen, review, refactor, ops, docs）",
			"unknown task type \"everything\" (known: design, codegen, review, refactor, ops, docs)"},
		{CodePathPrefix, []any{`"../x"`},
			"パスの範囲 \"../x\" は正しくありません",
			"path prefix \"../x\" is not valid"},
		{CodeShellNeedsPath, []any{},
			"ops=shell にはパスの範囲（paths=...）が必要です。範囲のない許可はシェルを対象にしません",
			"ops=shell needs a path scope (paths=...): a grant without one never covers shell"},
		{CodePatchInvalid, []any{},
			"提案のパッチを解釈できませんでした",
			"the patch cannot be parsed"},
		{CodePatchEmpty, []any{},
			"提案のパッチに操作がありません",
			"patch has no operations"},
		{CodeJobExists, []any{"job_20260101_001", fault.Term(fault.StateExpired)},
			"ジョブ job_20260101_001 はすでに期限切れです",
			"request job_20260101_001: the job is already expired"},
		{CodeJobIDTaken, []any{"job_20260101_001"},
			"ジョブ ID job_20260101_001 はほかの内容に使われています",
			"request job_20260101_001: the job id is taken by other content"},
		{CodeAnswerHasPatch, []any{},
			"回答にはパッチを含められません",
			"an answer carries no patch"},
		{CodeCostHasPatch, []any{},
			"コストの確認にはパッチを含められません",
			"a cost confirmation carries no patch"},
		{CodeCostNoEstimate, []any{},
			"コストの確認には見積もり（cost_hint）が必要です",
			"a cost confirmation needs the estimate (cost_hint)"},
		{CodeCostNegative, []any{},
			"見積もりが負の値です",
			"a negative estimate"},
		{CodeCostNotRun, []any{"job_20260101_001"},
			"ジョブ job_20260101_001 はコストの確認で、実行するものはありません",
			"job job_20260101_001 is a cost confirmation: it has nothing to run"},
		{CodeClaimedBy, []any{"job_20260101_001", "executor-2", "2026-01-01T10:32:00Z"},
			"ジョブ job_20260101_001 は executor-2 が実行中です（2026-01-01T10:32:00Z まで）",
			"job job_20260101_001 is already claimed by executor-2 until 2026-01-01T10:32:00Z"},
		{CodeAlreadyRun, []any{"job_20260101_001"},
			"ジョブ job_20260101_001 はすでに実行されました",
			"job job_20260101_001 was already claimed"},
		{CodeNotApproved, []any{"job_20260101_001", fault.Term(fault.StatePending)},
			"ジョブ job_20260101_001 は承認待ちのため実行できません（承認されていません）",
			"job job_20260101_001 is pending, not approved"},
		{CodeContentChanged, []any{"job_20260101_001"},
			"ジョブ job_20260101_001 の保存された内容が承認されたものと一致しないため、実行しません",
			"job job_20260101_001: stored patch no longer matches the approved content"},
		{CodeAutoApproveEnded, []any{"job_20260101_001"},
			"Auto-Approve が終わったため、ジョブ job_20260101_001 には承認が必要です",
			"Auto-Approve is no longer active; job job_20260101_001 needs approval"},
		{CodeAutoRunStopped, []any{"job_20260101_001"},
			"自動承認されたジョブ job_20260101_001 の実行が途中で止まり、Auto-Approve も終わっているため、ジョブを失敗としました",
			"the auto-approved execution of job_20260101_001 stopped and Auto-Approve is no longer in force; the job failed"},
		{TermTaskType, []any{},
			"タスク種別",
			"task type"},
		{TermRoute, []any{},
			"ルート",
			"route"},
		{TermOperation, []any{},
			"操作",
			"operation"},
		{TermAllowedOperation, []any{},
			"許可する操作",
			"allowed operation"},
	}
	var listed []string
	for _, tt := range tests {
		listed = append(listed, tt.code)
		m := Texts.New(nil, tt.code, tt.args...)
		if got := m.Text("ja"); got != tt.ja {
			t.Errorf("%s ja = %q, want %q", tt.code, got, tt.ja)
		}
		if got := m.Text("en"); got != tt.en {
			t.Errorf("%s en = %q, want %q", tt.code, got, tt.en)
		}
	}
	for code := range Texts {
		if !slices.Contains(listed, code) {
			t.Errorf("%s is not listed here", code)
		}
	}
	for _, code := range listed {
		if !Texts.Has(code) {
			t.Errorf("%s is listed but not in Texts", code)
		}
	}
	for _, s := range allStatuses {
		if State(s) == fault.StateUnknown {
			t.Errorf("state %s has no word", s)
		}
	}
}
