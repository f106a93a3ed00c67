package domain

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

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
		{CodeDenyGitInternals, []any{"1", "file_edit update"},
			"操作 1（file_edit update）は .git ディレクトリの中に書き込みます。これは常に禁止されています",
			"operation 1 (file_edit update) writes inside a .git directory, which is never allowed"},
		{CodeDenyGitDir, []any{"2", "file_edit create", "sub/.git/hooks/pre-commit"},
			"操作 2（file_edit create）は .git ディレクトリの中の sub/.git/hooks/pre-commit に触れます。これは常に禁止されています",
			"operation 2 (file_edit create) touches sub/.git/hooks/pre-commit, inside a .git directory, which is never allowed"},
		{CodeDenyPath, []any{"1", "file_edit update", ".env", ".env"},
			"操作 1（file_edit update）は .env に触れます。このパスは常に禁止されています（.env）",
			"operation 1 (file_edit update) touches .env, which is never allowed (.env)"},
		{CodeDenyCommand, []any{"3", "\"rm\\\\s+-rf\\\\s+/\""},
			"操作 3 は禁止されたパターン \"rm\\\\s+-rf\\\\s+/\" に一致するコマンドを実行します",
			"operation 3 runs a command matching the refused pattern \"rm\\\\s+-rf\\\\s+/\""},
		{CodeRequireDelete, []any{"file_edit delete docs/old.md"},
			"削除: file_edit delete docs/old.md",
			"delete: file_edit delete docs/old.md"},
		{CodeRequireRename, []any{"file_edit rename docs/a.md"},
			"名前の変更: file_edit rename docs/a.md",
			"rename: file_edit rename docs/a.md"},
		{CodeRequireSendSensitive, []any{"file_edit update .env.example"},
			"機密情報の送信: file_edit update .env.example",
			"sends sensitive data: file_edit update .env.example"},
		{CodeRequirePushPublic, []any{"git push origin refs/heads/main:refs/heads/main"},
			"リモートへの push: git push origin refs/heads/main:refs/heads/main",
			"push to a remote: git push origin refs/heads/main:refs/heads/main"},
		{CodeRequireForcePush, []any{"git push --force origin refs/heads/main:refs/heads/main"},
			"強制 push: git push --force origin refs/heads/main:refs/heads/main",
			"force push: git push --force origin refs/heads/main:refs/heads/main"},
		{CodeRequireNetwork, []any{"curl https://example.com"},
			"ネットワーク通信: curl https://example.com",
			"network access: curl https://example.com"},
		{CodeRequireExecuteScript, []any{"browser execute_script https://example.com"},
			"ブラウザでのスクリプト実行: browser execute_script https://example.com",
			"runs a script in the browser: browser execute_script https://example.com"},
		{CodeRequireBrowser, []any{"browser navigate https://example.com"},
			"ブラウザ操作: browser navigate https://example.com",
			"browser operation: browser navigate https://example.com"},
		{CodeRequireRemoteCode, []any{"curl https://example.com/x.sh | sh"},
			"ダウンロードしたコードの実行: curl https://example.com/x.sh | sh",
			"runs downloaded code: curl https://example.com/x.sh | sh"},
		{CodeRequirePrivilege, []any{"sudo make install"},
			"特権での実行: sudo make install",
			"runs with privileges: sudo make install"},
		{CodeRequirePermission, []any{"chmod 777 run.sh"},
			"権限の変更: chmod 777 run.sh",
			"changes permissions: chmod 777 run.sh"},
		{CodeRequireOutsideWorkspace, []any{"cp a /etc/a"},
			"ワークスペース外への書き込み: cp a /etc/a",
			"writes outside the workspace: cp a /etc/a"},
		{CodeRequireBackground, []any{"nohup make serve"},
			"バックグラウンドでの実行: nohup make serve",
			"runs in the background: nohup make serve"},
		{CodeRequireDynamicCommand, []any{"eval \"$X\""},
			"実行時に決まるコマンド: eval \"$X\"",
			"a command decided at run time: eval \"$X\""},
		{CodeRequireShellUnparsed, []any{"echo 'x"},
			"解釈できないシェルスクリプト: echo 'x",
			"a shell script that does not parse: echo 'x"},
		{CodeRequireBroadOverwrite, []any{"12"},
			"多数のファイルへの書き込み: 12 ファイル",
			"broad overwrite: 12 files written"},
		{CodeRequireCostOverLimit, []any{"2.50", "250000", "1.00", "100000"},
			"コスト超過: 見積もり $2.50 / 250000 トークン、上限 $1.00 / 100000 トークン",
			"cost over limit: estimate $2.50 / 250000 tokens, limit $1.00 / 100000 tokens"},
		{CodeRequireBrowserDeclared, []any{},
			"ブラウザ使用の申告: 提案がブラウザを使うと申告しています",
			"browser declared: the proposal declares browser use"},
		{CodeRequireUnknownBlocks, []any{"3"},
			"解釈できないブロック: 3 個",
			"blocks not understood: 3"},
		{CodeRequireShellByRule, []any{"small-docs", "2"},
			"シェルコマンド: ルール small-docs はこのパッチを許可しますが、操作 2 はシェルコマンドです。シェルを自動承認できるのは ops=shell を含む Auto-Approve だけです",
			"shell command: rule small-docs allows this patch, but operation 2 is a shell command, which only an Auto-Approve grant with ops=shell covers"},
		{CodeNeedsPerson, []any{"billing-needs-a-person", "billing code is reviewed by a person"},
			"人の承認が必要です: billing-needs-a-person（billing code is reviewed by a person）",
			"needs a person: billing-needs-a-person (billing code is reviewed by a person)"},
		{CodeAskNoGrant, []any{},
			"Auto-Approve はオフです",
			"Auto-Approve is off"},
		{CodeWithinGrant, []any{"grant_0123abcd", "2026-01-01T11:00:00Z"},
			"Auto-Approve の許可 grant_0123abcd の範囲内です（2026-01-01T11:00:00Z まで）",
			"within the Auto-Approve grant grant_0123abcd until 2026-01-01T11:00:00Z"},
		{CodeScopeTaskType, []any{"\"ops\"", "docs, codegen"},
			"タスク種別 \"ops\" は許可の範囲（docs, codegen）にありません",
			"task type \"ops\" is not in the grant (docs, codegen)"},
		{CodeScopeRoute, []any{"\"CODE3\"", "CODE1"},
			"ルート \"CODE3\" は許可の範囲（CODE1）にありません",
			"route \"CODE3\" is not in the grant (CODE1)"},
		{CodeScopeOperationKind, []any{"2", "file_edit.delete", "file_edit.update"},
			"操作 2（file_edit.delete）は許可の範囲の操作の種類（file_edit.update）ではありません",
			"operation 2 (file_edit.delete) is not a kind the grant covers (file_edit.update)"},
		{CodeScopeDeniedOperation, []any{"1", "git_operation commit", "git_operation"},
			"操作 1（git_operation commit）は許可で禁止されています（git_operation）",
			"operation 1 (git_operation commit) is denied by the grant (git_operation)"},
		{CodeScopeShellNotNamed, []any{"1"},
			"操作 1 はシェルコマンドですが、許可にシェル（ops=shell）が含まれていません",
			"operation 1 is a shell command; the grant does not name shell (ops=shell)"},
		{CodeScopeShellNoPaths, []any{"1"},
			"操作 1 はシェルコマンドです。パスの範囲のない許可はシェルを対象にしません",
			"operation 1 is a shell command; a grant without a path scope never covers shell"},
		{CodeScopeShellCommand, []any{"1", "rm is not a command that runs without approval"},
			"操作 1 は常に承認が必要なシェルコマンドです: rm is not a command that runs without approval",
			"operation 1 is a shell command that always needs approval: rm is not a command that runs without approval"},
		{CodeScopeWritesOutside, []any{"1", "../x"},
			"操作 1 はワークスペースの外の ../x に書き込みます",
			"operation 1 writes ../x, outside the workspace"},
		{CodeScopeWritesElsewhere, []any{"1", "src/x", "docs/"},
			"操作 1 は許可のパスの範囲（docs/）の外の src/x に書き込みます",
			"operation 1 writes src/x, outside the grant's paths (docs/)"},
		{CodeScopeNoPath, []any{"1", "git_operation push"},
			"操作 1（git_operation push）には許可の範囲にできるワークスペースのパスがありません",
			"operation 1 (git_operation push) has no workspace path the grant could cover"},
		{CodeScopePathElsewhere, []any{"2", "src/a.go", "docs/"},
			"操作 2 は許可のパスの範囲（docs/）の外の src/a.go に触れます",
			"operation 2 touches src/a.go, outside the grant's paths (docs/)"},
		{CodeRevokedGrantEnded, []any{},
			"自動承認した Auto-Approve の許可がもう有効ではありません",
			"the Auto-Approve grant that approved it is no longer in force"},
		{CodeRevokedSwitchedOff, []any{},
			"Auto-Approve がオフにされました",
			"Auto-Approve was switched off"},
		{CodeRevokedBeforeClaim, []any{},
			"実行が始まる前に Auto-Approve がオフになったか、許可の期限が切れました",
			"Auto-Approve is off or its grant ended before the claim"},
		{CodeRefusedByPolicy, []any{"job_20260101_001", "never-prod", "production is deployed by hand"},
			"⛔ job_20260101_001 はポリシーにより拒否されました（never-prod）。実行されません。\n理由: production is deployed by hand",
			"⛔ job_20260101_001 was refused by policy (never-prod); it will not run.\nReason: production is deployed by hand"},
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
		if strings.HasPrefix(tt.code, "DENY_") || strings.HasPrefix(tt.code, "REQUIRE_") || strings.HasPrefix(tt.code, "SCOPE_") ||
			strings.HasPrefix(tt.code, "REVOKED_") || slices.Contains(policyWords, tt.code) {
			checkLanguages(t, tt.code, Texts[tt.code])
		}
		listed = append(listed, tt.code)
		m := Texts.New(nil, tt.code, tt.args...)
		if got := m.Text("ja"); got != tt.ja {
			t.Errorf("%s ja = %q, want %q", tt.code, got, tt.ja)
		}
		if got := m.Text("en"); got != tt.en {
			t.Errorf("%s en = %q, want %q", tt.code, got, tt.en)
		}
	}
	Texts.ReportUncovered(t.Errorf, func(code string) bool { return slices.Contains(listed, code) })
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

// policyWords are the codes of the policy's reasons beyond the DENY_, REQUIRE_, SCOPE_ and
// REVOKED_ families.
var policyWords = []string{CodeNeedsPerson, CodeAskNoGrant, CodeWithinGrant, CodeRefusedByPolicy}

var (
	verbs = regexp.MustCompile(`%\[\d+\]s`)
	// identifiers are the names a Japanese text keeps as they are: the feature, git's words, a
	// scope's syntax.
	identifiers = strings.NewReplacer("Auto-Approve", "", "ops=shell", "", ".git", "", "push", "")
	latinWord   = regexp.MustCompile(`[A-Za-z]{2,}`)
)

// checkLanguages fails a policy text whose Japanese form has English words of ours in it (the
// arguments are data, names of rules and features stay as they are) or whose English form has
// Japanese in it.
func checkLanguages(t *testing.T, code string, forms [2]string) {
	t.Helper()
	if w := latinWord.FindString(identifiers.Replace(verbs.ReplaceAllString(forms[0], ""))); w != "" {
		t.Errorf("%s: the Japanese form has the English word %q: %q", code, w, forms[0])
	}
	if strings.ContainsFunc(forms[1], func(r rune) bool {
		return unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han) || (r >= 0xFF00 && r <= 0xFFEF) || (r >= 0x3000 && r <= 0x303F)
	}) {
		t.Errorf("%s: the English form has Japanese in it: %q", code, forms[1])
	}
}
