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
