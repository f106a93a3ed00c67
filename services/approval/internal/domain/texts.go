package domain

import "github.com/picoclaw-suite/picoclaw/pkg/fault"

// Texts are approval's words for the user about a refused request, by code (pkg/fault
// messages): the rpc layer sends them in the request's locale, and chat-mio and the executor
// pass them on as they are. The arguments are data — job ids, times, paths, a person's id.
var Texts = fault.Catalog{
	// Decisions.
	CodeExpired:         {"ジョブ %[1]s は %[2]s に期限切れになりました", "job %[1]s expired at %[2]s"},
	CodeAlreadyDecided:  {"ジョブ %[1]s はすでに%[2]sです", "job %[1]s is already %[2]s"},
	CodeCostInChat:      {"%[1]s はコストの確認です。依頼したチャットで答えてください（/approve %[1]s）", "%[1]s is a cost confirmation: answer it in the chat that asked (/approve %[1]s)"},
	CodeNoApprover:      {"承認者が分かりません", "no approver identity"},
	CodeBotCannotDecide: {"ボット（%[1]s）は承認できません", "the bot identity %[1]s cannot approve"},
	CodeNotApprover:     {"%[1]s は承認者ではありません", "%[1]s is not an approver"},

	// Approve similar.
	CodeSimilarTooShort:  {"同種の承認の期間は 1m 以上にしてください（指定: %[1]s）", "approve similar: the time must be at least 1m, got %[1]s"},
	CodeSimilarTooLong:   {"同種の承認の期間 %[1]s は上限 %[2]s を超えています", "approve similar: the time %[1]s exceeds the maximum %[2]s"},
	CodeSimilarDisabled:  {"設定で Auto-Approve が無効なため（approval.auto_approve.enabled）、同種の承認もできません", "Auto-Approve is disabled by configuration (approval.auto_approve.enabled), so approve similar is too"},
	CodeSimilarCost:      {"%[1]s はコストの確認です。単独で承認してください（/approve %[1]s）。同種の承認はできません", "%[1]s is a cost confirmation: approve it alone (/approve %[1]s); nothing similar can be allowed from it"},
	CodeSimilarGrantOn:   {"Auto-Approve が有効です（%[1]s）。%[2]s を単独で承認するか、先に Auto-Approve を止めてください", "Auto-Approve is on (grant %[1]s); approve %[2]s alone, or switch Auto-Approve off first"},
	CodeSimilarNotStored: {"%[1]s は承認しましたが、同種のジョブの承認を記録できませんでした", "%[1]s is approved, but the grant for similar jobs could not be recorded"},
	CodeSimilarNothing:   {"%[1]s の操作はどれも常に承認が必要なもの（削除・リネーム・push・ブラウザ・シェル・機密など）で、同種として許可できるものがありません", "%[1]s has only operations that always need approval (delete, rename, push, browser, shell, secrets …): nothing to allow as similar"},
	CodeSimilarNoPath:    {"%[1]s はワークスペースのパスに触れないため、範囲を決められません", "%[1]s touches no workspace path to scope a grant to"},

	// Auto-Approve.
	CodeAutoDisabled:   {"設定で Auto-Approve が無効です（approval.auto_approve.enabled）", "Auto-Approve is disabled by configuration (approval.auto_approve.enabled)"},
	CodeTTLNegative:    {"ttl は正の値にしてください", "ttl must be positive"},
	CodeTTLTooLong:     {"ttl %[1]s は上限 %[2]s を超えています（approval.auto_approve.max_ttl）", "ttl %[1]s exceeds the maximum %[2]s (approval.auto_approve.max_ttl)"},
	CodeTTLTooShort:    {"ttl は 1s 以上にしてください", "ttl must be at least 1s"},
	CodeUnknownValue:   {"%[1]s %[2]s は使えません（使えるもの: %[3]s）", "unknown %[1]s %[2]s (known: %[3]s)"},
	CodePathPrefix:     {"パスの範囲 %[1]s は正しくありません", "path prefix %[1]s is not valid"},
	CodeShellNeedsPath: {"ops=shell にはパスの範囲（paths=...）が必要です。範囲のない許可はシェルを対象にしません", "ops=shell needs a path scope (paths=...): a grant without one never covers shell"},

	// Requests.
	CodePatchInvalid:   {"提案のパッチを解釈できませんでした", "the patch cannot be parsed"},
	CodePatchEmpty:     {"提案のパッチに操作がありません", "patch has no operations"},
	CodeJobExists:      {"ジョブ %[1]s はすでに%[2]sです", "request %[1]s: the job is already %[2]s"},
	CodeJobIDTaken:     {"ジョブ ID %[1]s はほかの内容に使われています", "request %[1]s: the job id is taken by other content"},
	CodeAnswerHasPatch: {"回答にはパッチを含められません", "an answer carries no patch"},
	CodeCostHasPatch:   {"コストの確認にはパッチを含められません", "a cost confirmation carries no patch"},
	CodeCostNoEstimate: {"コストの確認には見積もり（cost_hint）が必要です", "a cost confirmation needs the estimate (cost_hint)"},
	CodeCostNegative:   {"見積もりが負の値です", "a negative estimate"},

	// Claims (the executor passes these on to the chat).
	CodeCostNotRun:       {"ジョブ %[1]s はコストの確認で、実行するものはありません", "job %[1]s is a cost confirmation: it has nothing to run"},
	CodeClaimedBy:        {"ジョブ %[1]s は %[2]s が実行中です（%[3]s まで）", "job %[1]s is already claimed by %[2]s until %[3]s"},
	CodeAlreadyRun:       {"ジョブ %[1]s はすでに実行されました", "job %[1]s was already claimed"},
	CodeNotApproved:      {"ジョブ %[1]s は%[2]sのため実行できません（承認されていません）", "job %[1]s is %[2]s, not approved"},
	CodeContentChanged:   {"ジョブ %[1]s の保存された内容が承認されたものと一致しないため、実行しません", "job %[1]s: stored patch no longer matches the approved content"},
	CodeAutoApproveEnded: {"Auto-Approve が終わったため、ジョブ %[1]s には承認が必要です", "Auto-Approve is no longer active; job %[1]s needs approval"},
	CodeAutoRunStopped:   {"自動承認されたジョブ %[1]s の実行が途中で止まり、Auto-Approve も終わっているため、ジョブを失敗としました", "the auto-approved execution of %[1]s stopped and Auto-Approve is no longer in force; the job failed"},

	// Policy: why a proposal is refused (hard deny), what needs a person (the hits of the
	// approval request), why a job waits or was approved by Auto-Approve. The English forms are
	// the texts the audit log records.
	CodeDenyGitInternals: {"操作 %[1]s（%[2]s）は .git ディレクトリの中に書き込みます。これは常に禁止されています",
		"operation %[1]s (%[2]s) writes inside a .git directory, which is never allowed"},
	CodeDenyGitDir: {"操作 %[1]s（%[2]s）は .git ディレクトリの中の %[3]s に触れます。これは常に禁止されています",
		"operation %[1]s (%[2]s) touches %[3]s, inside a .git directory, which is never allowed"},
	CodeDenyPath: {"操作 %[1]s（%[2]s）は %[3]s に触れます。このパスは常に禁止されています（%[4]s）",
		"operation %[1]s (%[2]s) touches %[3]s, which is never allowed (%[4]s)"},
	CodeDenyCommand: {"操作 %[1]s は禁止されたパターン %[2]s に一致するコマンドを実行します",
		"operation %[1]s runs a command matching the refused pattern %[2]s"},
	CodeRequireDelete:           {"削除: %[1]s", "delete: %[1]s"},
	CodeRequireRename:           {"名前の変更: %[1]s", "rename: %[1]s"},
	CodeRequireSendSensitive:    {"機密情報の送信: %[1]s", "sends sensitive data: %[1]s"},
	CodeRequirePushPublic:       {"リモートへの push: %[1]s", "push to a remote: %[1]s"},
	CodeRequireForcePush:        {"強制 push: %[1]s", "force push: %[1]s"},
	CodeRequireNetwork:          {"ネットワーク通信: %[1]s", "network access: %[1]s"},
	CodeRequireExecuteScript:    {"ブラウザでのスクリプト実行: %[1]s", "runs a script in the browser: %[1]s"},
	CodeRequireBrowser:          {"ブラウザ操作: %[1]s", "browser operation: %[1]s"},
	CodeRequireRemoteCode:       {"ダウンロードしたコードの実行: %[1]s", "runs downloaded code: %[1]s"},
	CodeRequirePrivilege:        {"特権での実行: %[1]s", "runs with privileges: %[1]s"},
	CodeRequirePermission:       {"権限の変更: %[1]s", "changes permissions: %[1]s"},
	CodeRequireOutsideWorkspace: {"ワークスペース外への書き込み: %[1]s", "writes outside the workspace: %[1]s"},
	CodeRequireBackground:       {"バックグラウンドでの実行: %[1]s", "runs in the background: %[1]s"},
	CodeRequireDynamicCommand:   {"実行時に決まるコマンド: %[1]s", "a command decided at run time: %[1]s"},
	CodeRequireShellUnparsed:    {"解釈できないシェルスクリプト: %[1]s", "a shell script that does not parse: %[1]s"},
	CodeRequireBroadOverwrite:   {"多数のファイルへの書き込み: %[1]s ファイル", "broad overwrite: %[1]s files written"},
	CodeRequireCostOverLimit: {"コスト超過: 見積もり $%[1]s / %[2]s トークン、上限 $%[3]s / %[4]s トークン",
		"cost over limit: estimate $%[1]s / %[2]s tokens, limit $%[3]s / %[4]s tokens"},
	CodeRequireBrowserDeclared: {"ブラウザ使用の申告: 提案がブラウザを使うと申告しています", "browser declared: the proposal declares browser use"},
	CodeRequireUnknownBlocks:   {"解釈できないブロック: %[1]s 個", "blocks not understood: %[1]s"},
	CodeRequireShellByRule: {"シェルコマンド: ルール %[1]s はこのパッチを許可しますが、操作 %[2]s はシェルコマンドです。シェルを自動承認できるのは ops=shell を含む Auto-Approve だけです",
		"shell command: rule %[1]s allows this patch, but operation %[2]s is a shell command, which only an Auto-Approve grant with ops=shell covers"},
	CodeNeedsPerson: {"人の承認が必要です: %[1]s（%[2]s）", "needs a person: %[1]s (%[2]s)"},
	CodeAskNoGrant:  {"Auto-Approve はオフです", "Auto-Approve is off"},
	CodeWithinGrant: {"Auto-Approve の許可 %[1]s の範囲内です（%[2]s まで）", "within the Auto-Approve grant %[1]s until %[2]s"},
	CodeScopeTaskType: {"タスク種別 %[1]s は許可の範囲（%[2]s）にありません",
		"task type %[1]s is not in the grant (%[2]s)"},
	CodeScopeRoute: {"ルート %[1]s は許可の範囲（%[2]s）にありません", "route %[1]s is not in the grant (%[2]s)"},
	CodeScopeOperationKind: {"操作 %[1]s（%[2]s）は許可の範囲の操作の種類（%[3]s）ではありません",
		"operation %[1]s (%[2]s) is not a kind the grant covers (%[3]s)"},
	CodeScopeDeniedOperation: {"操作 %[1]s（%[2]s）は許可で禁止されています（%[3]s）",
		"operation %[1]s (%[2]s) is denied by the grant (%[3]s)"},
	CodeScopeShellNotNamed: {"操作 %[1]s はシェルコマンドですが、許可にシェル（ops=shell）が含まれていません",
		"operation %[1]s is a shell command; the grant does not name shell (ops=shell)"},
	CodeScopeShellNoPaths: {"操作 %[1]s はシェルコマンドです。パスの範囲のない許可はシェルを対象にしません",
		"operation %[1]s is a shell command; a grant without a path scope never covers shell"},
	CodeScopeShellCommand: {"操作 %[1]s は常に承認が必要なシェルコマンドです: %[2]s",
		"operation %[1]s is a shell command that always needs approval: %[2]s"},
	CodeScopeWritesOutside: {"操作 %[1]s はワークスペースの外の %[2]s に書き込みます",
		"operation %[1]s writes %[2]s, outside the workspace"},
	CodeScopeWritesElsewhere: {"操作 %[1]s は許可のパスの範囲（%[3]s）の外の %[2]s に書き込みます",
		"operation %[1]s writes %[2]s, outside the grant's paths (%[3]s)"},
	CodeScopeNoPath: {"操作 %[1]s（%[2]s）には許可の範囲にできるワークスペースのパスがありません",
		"operation %[1]s (%[2]s) has no workspace path the grant could cover"},
	CodeScopePathElsewhere: {"操作 %[1]s は許可のパスの範囲（%[3]s）の外の %[2]s に触れます",
		"operation %[1]s touches %[2]s, outside the grant's paths (%[3]s)"},
	CodeRevokedGrantEnded: {"自動承認した Auto-Approve の許可がもう有効ではありません",
		"the Auto-Approve grant that approved it is no longer in force"},
	CodeRevokedSwitchedOff: {"Auto-Approve がオフにされました", "Auto-Approve was switched off"},
	CodeRefusedByPolicy: {"⛔ %[1]s はポリシーにより拒否されました（%[2]s）。実行されません。\n理由: %[3]s",
		"⛔ %[1]s was refused by policy (%[2]s); it will not run.\nReason: %[3]s"},
	CodeRevokedBeforeClaim: {"実行が始まる前に Auto-Approve がオフになったか、許可の期限が切れました",
		"Auto-Approve is off or its grant ended before the claim"},

	// Terms: what a value is (a job's state is a shared word: fault.States).
	TermTaskType:         {"タスク種別", "task type"},
	TermRoute:            {"ルート", "route"},
	TermOperation:        {"操作", "operation"},
	TermAllowedOperation: {"許可する操作", "allowed operation"},
}

// The codes of Texts.
const (
	CodeExpired         = "EXPIRED_AT"
	CodeAlreadyDecided  = "ALREADY_DECIDED"
	CodeCostInChat      = "COST_CONFIRMATION_IN_CHAT"
	CodeNoApprover      = "NO_APPROVER_IDENTITY"
	CodeBotCannotDecide = "BOT_CANNOT_APPROVE"
	CodeNotApprover     = "NOT_AN_APPROVER"

	CodeSimilarTooShort  = "SIMILAR_TTL_TOO_SHORT"
	CodeSimilarTooLong   = "SIMILAR_TTL_TOO_LONG"
	CodeSimilarDisabled  = "SIMILAR_DISABLED"
	CodeSimilarCost      = "SIMILAR_COST_CONFIRMATION"
	CodeSimilarGrantOn   = "SIMILAR_AUTO_APPROVE_ON"
	CodeSimilarNotStored = "SIMILAR_GRANT_NOT_RECORDED"
	CodeSimilarNothing   = "SIMILAR_NOTHING_TO_ALLOW"
	CodeSimilarNoPath    = "SIMILAR_NO_PATH"

	CodeAutoDisabled   = "AUTO_APPROVE_DISABLED"
	CodeTTLNegative    = "TTL_NOT_POSITIVE"
	CodeTTLTooLong     = "TTL_TOO_LONG"
	CodeTTLTooShort    = "TTL_TOO_SHORT"
	CodeUnknownValue   = "UNKNOWN_SCOPE_VALUE"
	CodePathPrefix     = "PATH_PREFIX_INVALID"
	CodeShellNeedsPath = "SHELL_NEEDS_PATH_SCOPE"

	CodePatchInvalid   = "PATCH_INVALID"
	CodePatchEmpty     = "PATCH_EMPTY"
	CodeJobExists      = "JOB_EXISTS"
	CodeJobIDTaken     = "JOB_ID_TAKEN"
	CodeAnswerHasPatch = "ANSWER_HAS_PATCH"
	CodeCostHasPatch   = "COST_CONFIRMATION_HAS_PATCH"
	CodeCostNoEstimate = "COST_CONFIRMATION_NO_ESTIMATE"
	CodeCostNegative   = "COST_CONFIRMATION_NEGATIVE"

	CodeCostNotRun       = "COST_CONFIRMATION_NOT_RUN"
	CodeClaimedBy        = "CLAIMED_BY_ANOTHER"
	CodeAlreadyRun       = "ALREADY_RUN"
	CodeNotApproved      = "NOT_APPROVED"
	CodeContentChanged   = "CONTENT_CHANGED"
	CodeAutoApproveEnded = "AUTO_APPROVE_ENDED"
	CodeAutoRunStopped   = "AUTO_APPROVED_RUN_STOPPED"

	CodeDenyGitInternals        = "DENY_GIT_INTERNALS"
	CodeDenyGitDir              = "DENY_GIT_DIR"
	CodeDenyPath                = "DENY_PATH"
	CodeDenyCommand             = "DENY_COMMAND"
	CodeRequireDelete           = "REQUIRE_DELETE"
	CodeRequireRename           = "REQUIRE_RENAME"
	CodeRequireSendSensitive    = "REQUIRE_SEND_SENSITIVE"
	CodeRequirePushPublic       = "REQUIRE_PUSH_PUBLIC"
	CodeRequireForcePush        = "REQUIRE_FORCE_PUSH"
	CodeRequireNetwork          = "REQUIRE_NETWORK"
	CodeRequireExecuteScript    = "REQUIRE_EXECUTE_SCRIPT"
	CodeRequireBrowser          = "REQUIRE_BROWSER"
	CodeRequireRemoteCode       = "REQUIRE_REMOTE_CODE"
	CodeRequirePrivilege        = "REQUIRE_PRIVILEGE"
	CodeRequirePermission       = "REQUIRE_PERMISSION"
	CodeRequireOutsideWorkspace = "REQUIRE_OUTSIDE_WORKSPACE"
	CodeRequireBackground       = "REQUIRE_BACKGROUND"
	CodeRequireDynamicCommand   = "REQUIRE_DYNAMIC_COMMAND"
	CodeRequireShellUnparsed    = "REQUIRE_SHELL_UNPARSED"
	CodeRequireBroadOverwrite   = "REQUIRE_BROAD_OVERWRITE"
	CodeRequireCostOverLimit    = "REQUIRE_COST_OVER_LIMIT"
	CodeRequireBrowserDeclared  = "REQUIRE_BROWSER_DECLARED"
	CodeRequireUnknownBlocks    = "REQUIRE_UNKNOWN_BLOCKS"
	CodeRequireShellByRule      = "REQUIRE_SHELL_NOT_BY_RULE"
	CodeNeedsPerson             = "NEEDS_PERSON"
	CodeAskNoGrant              = "AUTO_APPROVE_OFF"
	CodeWithinGrant             = "WITHIN_GRANT"
	CodeScopeTaskType           = "SCOPE_TASK_TYPE"
	CodeScopeRoute              = "SCOPE_ROUTE"
	CodeScopeOperationKind      = "SCOPE_OPERATION_KIND"
	CodeScopeDeniedOperation    = "SCOPE_DENIED_OPERATION"
	CodeScopeShellNotNamed      = "SCOPE_SHELL_NOT_NAMED"
	CodeScopeShellNoPaths       = "SCOPE_SHELL_NO_PATHS"
	CodeScopeShellCommand       = "SCOPE_SHELL_COMMAND"
	CodeScopeWritesOutside      = "SCOPE_WRITES_OUTSIDE_WORKSPACE"
	CodeScopeWritesElsewhere    = "SCOPE_WRITES_OUTSIDE_PATHS"
	CodeScopeNoPath             = "SCOPE_NO_PATH"
	CodeScopePathElsewhere      = "SCOPE_PATH_OUTSIDE_PATHS"
	CodeRevokedGrantEnded       = "REVOKED_GRANT_ENDED"
	CodeRevokedSwitchedOff      = "REVOKED_SWITCHED_OFF"
	CodeRevokedBeforeClaim      = "REVOKED_BEFORE_CLAIM"
	CodeRefusedByPolicy         = "REFUSED_BY_POLICY"

	TermTaskType         = "KIND_TASK_TYPE"
	TermRoute            = "KIND_ROUTE"
	TermOperation        = "KIND_OPERATION"
	TermAllowedOperation = "KIND_ALLOWED_OPERATION"
)

// Fail is the refusal code of Texts with args, of the kind of sentinel.
func Fail(sentinel error, code string, args ...any) error {
	return Texts.New(sentinel, code, args...)
}

// FailWith is Fail over the failure beneath (kept for the log, not shown).
func FailWith(sentinel, cause error, code string, args ...any) error {
	return Texts.Wrap(sentinel, cause, code, args...)
}

// State is a job state as a word every catalog has (fault.States).
func State(s Status) fault.Term { return fault.State(string(s)) }
