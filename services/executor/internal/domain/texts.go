package domain

import "github.com/picoclaw-suite/picoclaw/pkg/fault"

// Texts are the executor's words for the user about what went wrong, by code (pkg/fault
// messages): the failure of one command in the result, and the refusal of a whole job. The
// arguments are data — paths, numbers, names, the bridge's own words — so a Japanese reply
// carries no English of ours; a command's own output is never rewritten.
var Texts = fault.Catalog{
	// Paths.
	CodePathEmpty:       {"パスが空です", "empty path"},
	CodePathNUL:         {"パスに NUL 文字が含まれています", "path contains a NUL byte"},
	CodePathNotUTF8:     {"パスが UTF-8 として正しくありません", "path is not valid UTF-8"},
	CodePathAbsolute:    {"絶対パス %[1]s は使えません", "absolute path %[1]s"},
	CodePathBackslash:   {"パス %[1]s にバックスラッシュが含まれています", "backslash in path %[1]s"},
	CodePathDrive:       {"ドライブ指定のパス %[1]s は使えません", "drive path %[1]s"},
	CodePathHome:        {"ホームディレクトリからのパス %[1]s は使えません", "home-relative path %[1]s"},
	CodePathControl:     {"パス %[1]s に制御文字が含まれています", "control character in path %[1]s"},
	CodePathComponent:   {"パスの要素が %[1]s バイトを超えています", "path component longer than %[1]s bytes"},
	CodePathGit:         {"パス %[1]s は git の内部（.git）を指しています", "path %[1]s is inside git internals"},
	CodePathIsWorkspace: {"パス %[1]s はワークスペースそのものです", "path %[1]s names the workspace itself"},
	CodeLeavesWorkspace: {"%[1]s はワークスペースの外を指しています", "%[1]s leaves the workspace"},

	// Files.
	CodeSymlinkInPath:   {"%[1]s はシンボリックリンク %[2]s を経由するため使えません", "%[1]s goes through the symlink %[2]s"},
	CodeDanglingSymlink: {"%[1]s はリンク先のないシンボリックリンクです", "%[1]s is a dangling symlink"},
	CodeNotRegularFile:  {"%[1]s は通常のファイルではありません", "%[1]s is not a regular file"},
	CodeHardLinks:       {"%[1]s にはハードリンクが %[2]s 個あるため書き込みません", "%[1]s has %[2]s hard links"},
	CodeIsDirectory:     {"%[1]s はディレクトリです", "%[1]s is a directory"},
	CodeRenameExists:    {"名前の変更先 %[1]s はすでに存在します", "rename target %[1]s already exists"},
	CodeFileMissing:     {"%[1]s が見つかりません", "%[1]s does not exist"},
	CodeFileIO:          {"%[1]s を読み書きできませんでした", "%[1]s could not be read or written"},

	// Operations.
	CodeUnknownType:   {"操作の種類 %[1]s は実行できません", "unknown operation type %[1]s"},
	CodeUnknownAction: {"%[1]s の操作 %[2]s は実行できません", "unknown %[1]s action %[2]s"},
	CodeShellEmpty:    {"シェルコマンドが空です", "empty shell command"},
	CodeShellNUL:      {"シェルコマンドに NUL 文字が含まれています", "NUL byte in shell command"},

	// Diffs.
	CodeDiffUnreadable:      {"差分を読み取れませんでした", "the diff cannot be read"},
	CodeDiffEmpty:           {"差分にファイルの変更がありません", "diff contains no file changes"},
	CodeDiffMissesTarget:    {"差分が %[1]s を変更していません", "diff does not change %[1]s"},
	CodeDiffCreatesExisting: {"差分は %[1]s を新規作成しますが、すでに存在します", "diff creates %[1]s, which already exists"},
	CodeDiffChangesMissing:  {"差分は %[1]s を変更しますが、存在しません", "diff changes %[1]s, which does not exist"},
	CodeDiffConflict:        {"差分を %[1]s に適用できません（前後の行が一致しません）", "diff does not apply to %[1]s (context mismatch)"},
	CodeDiffFailed:          {"差分を %[1]s に適用できませんでした", "diff for %[1]s cannot be applied"},

	// Processes (shell and git).
	CodeExitStatus:     {"終了コード %[1]s で終了しました", "exit status %[1]s"},
	CodeTimedOut:       {"%[1]s で時間切れになり、起動したプロセスをすべて止めました", "timed out after %[1]s (every process it started was killed)"},
	CodeCancelled:      {"ジョブが止められたため、コマンドを中断しました", "cancelled: the job was stopped"},
	CodeKilledBySignal: {"シグナル %[1]s で終了させられました", "killed by %[1]s"},
	CodeKilledCPU:      {"CPU 時間の上限に達したため、%[1]s で終了させられました", "killed by %[1]s (cpu time limit)"},
	CodeKilledFileSize: {"ファイルサイズの上限に達したため、%[1]s で終了させられました", "killed by %[1]s (file size limit)"},
	CodeNotStarted:     {"%[1]s を起動できませんでした", "%[1]s could not be started"},
	CodeNoSandbox: {"サンドボックスを用意できないため実行していません。シェルと git のコマンドはサンドボックスの中でだけ実行します（`picoclaw doctor` でマシンを確認してください。executor.sandbox.mode: none にすると制限なしで実行します）",
		"sandbox unavailable — shell and git commands run only in the sandbox (check the machine with `picoclaw doctor`; executor.sandbox.mode: none runs them unconfined)"},

	// Git.
	CodeGitConfigUnreadable: {"リポジトリの設定を読めませんでした", "the repository configuration cannot be read"},
	CodeGitConfigTooLarge:   {"リポジトリの設定が %[1]s バイトを超えています", "the repository configuration is larger than %[1]s bytes"},
	CodeGitConfigUnsafe: {"リポジトリの設定が %[1]s を指定しており、git が別のプログラムを実行しかねません。先に .git/config から外してください",
		"the repository configuration sets %[1]s, which could make git run a program; remove it from .git/config first"},
	CodeGitAddPaths:      {"git add にはパスが必要です", "git add needs paths"},
	CodeGitCommitMessage: {"git commit にはメッセージが必要です", "git commit needs a message"},
	CodeGitResetMode:     {"git reset のモード %[1]s は使えません", "unknown git reset mode %[1]s"},
	CodeGitCheckoutOne:   {"git checkout にはブランチかパスを一つだけ指定してください", "git checkout needs one branch or path"},
	CodeGitPushInvalid:   {"git push の指定が正しくありません", "the git push is not valid"},
	CodeGitTargetNUL:     {"git の対象に NUL 文字が含まれています", "NUL byte in git target"},
	CodeGitOption:        {"git のオプション %[1]s は対象に指定できません", "git option %[1]s is not allowed in a target"},
	CodeGitRef:           {"git の参照またはリモート %[1]s は正しくありません", "invalid git ref or remote %[1]s"},

	// The browser (MCP Chrome bridge).
	CodeBridgeNotConfigured:  {"MCP Chrome ブリッジが設定されていません（executor.mcp.chrome_bridge_url）", "no MCP Chrome bridge configured (executor.mcp.chrome_bridge_url)"},
	CodeBridgeUnreachable:    {"MCP Chrome ブリッジ（%[1]s）に接続できません", "MCP Chrome bridge at %[1]s is unreachable"},
	CodeBridgeCallFailed:     {"MCP Chrome ブリッジで %[1]s を呼べませんでした", "%[1]s via MCP Chrome bridge failed"},
	CodeBridgeToolError:      {"%[1]s がエラーを返しました: %[2]s", "%[1]s: %[2]s"},
	CodeBrowserNoTool:        {"MCP Chrome ブリッジにはブラウザ操作 %[1]s のツールがありません", "the MCP Chrome bridge has no tool for browser action %[1]s"},
	CodeBrowserNeedsURL:      {"%[1]s には URL が必要です", "%[1]s needs a URL"},
	CodeBrowserNeedsXY:       {"%[1]s には metadata.x と metadata.y の両方が必要です", "%[1]s needs both metadata.x and metadata.y"},
	CodeBrowserNeedsTarget:   {"%[1]s にはセレクターか座標が必要です", "%[1]s needs a selector or coordinates"},
	CodeBrowserNeedsSelector: {"%[1]s にはセレクターが必要です", "%[1]s needs a selector"},
	CodeBrowserNeedsKeys:     {"%[1]s には押すキーが必要です", "%[1]s needs keys"},
	CodeBrowserArgument:      {"%[1]s の metadata.%[2]s が正しくありません", "%[1]s metadata.%[2]s is not valid"},
	CodeScreenshotTooLarge:   {"スクリーンショットが %[1]s バイトを超えています", "screenshot larger than %[1]s bytes"},
	CodeScreenshotBad:        {"ブリッジが返したスクリーンショットを読めませんでした", "the bridge's screenshot cannot be read"},
	CodeScreenshotMissing:    {"ブリッジが画像を返しませんでした", "the bridge returned no image"},
	CodeScreenshotType:       {"スクリーンショットの種類 %[1]s は画像ではありません", "screenshot has type %[1]s, not an image"},
	CodeArtifactsMissing:     {"成果物の保存先が設定されていません（executor.browser.artifacts_dir）", "no artifacts directory configured (executor.browser.artifacts_dir)"},
	CodeArtifactsIO:          {"成果物を保存できませんでした", "the artifact could not be kept"},

	// Rollback and auto-commit.
	CodeSnapshotFailed:     {"ロールバック用のスナップショットを作れなかったため、何も実行していません", "no snapshot for the rollback could be taken, so nothing was run"},
	CodeRollbackIncomplete: {"一部のファイルを元に戻せませんでした", "some files could not be restored"},
	CodeCommitNoRepository: {"ワークスペースが git リポジトリではありません", "workspace is not a git repository"},
	CodeCommitStep:         {"%[1]s に失敗しました", "%[1]s failed"},

	// The executor's line in /status.
	CodeSandboxNoteOn:          {"サンドボックス: %[1]s、ネットワーク %[2]s", "sandbox: %[1]s, network %[2]s"},
	CodeSandboxNoteNone:        {"サンドボックス: なし（executor.sandbox.mode: none — コマンドは制限なしで実行されます）", "sandbox: none (executor.sandbox.mode: none — commands run unconfined)"},
	CodeSandboxNoteUnavailable: {"サンドボックス: 使えません — シェルと git のコマンドは実行しません（`picoclaw doctor` で確認してください）", "sandbox: unavailable — shell and git commands are refused (check with `picoclaw doctor`)"},

	// Refusals of a whole job.
	CodeNotApproved:         {"ジョブ %[1]s は%[2]sのため実行できません（承認されていません）", "job %[1]s is %[2]s, not approved"},
	CodeHashMismatch:        {"ジョブ %[1]s の内容が承認されたものと一致しないため、実行していません（再計算 %[2]s、承認時 %[3]s）", "job %[1]s: content hash mismatch (recomputed %[2]s, approved %[3]s); nothing was run"},
	CodeBrowserAutoApproved: {"ジョブ %[1]s はブラウザ操作を含み、自動承認されています。ブラウザ操作には人の承認が必要です", "job %[1]s has browser operations and was auto-approved; browser jobs need a person's approval"},
	CodeTakenOver:           {"ジョブ %[1]s は別のエグゼキューターに引き継がれました", "job %[1]s was taken over by another executor"},
	CodeStale:               {"%[1]s は提案が書かれた後に%[2]s（提案時 %[3]s、今 %[4]s）。何も書き込んでいません。もう一度依頼してください", "%[1]s %[2]s after the proposal was written (proposal base %[3]s, now %[4]s); nothing was written — ask for a new proposal"},
	CodeStaleRetry:          {"%[1]s は提案が書かれた後に%[2]s（提案時 %[3]s、今 %[4]s）。何も書き込んでいません。/retry %[5]s で同じオーダーに今の内容で依頼し直せます", "%[1]s %[2]s after the proposal was written (proposal base %[3]s, now %[4]s); nothing was written — send /retry %[5]s to ask the same order again with the current content"},
	CodeInterruptedKept:     {"ジョブ %[1]s を実行していたエグゼキューターが途中で停止しました。ロールバックが無効のため、ワークスペースに変更の一部が残っている可能性があります。二度は実行しません", "the executor running job %[1]s stopped midway; rollback is off, so part of its changes may be in the workspace. It is not run twice"},
	CodeInterruptedStuck:    {"ジョブ %[1]s を実行していたエグゼキューターが途中で停止し、変更を元に戻せませんでした。二度は実行しません", "the executor running job %[1]s stopped midway and its changes could not be undone. It is not run twice"},
	CodeInterruptedUndone:   {"ジョブ %[1]s を実行していたエグゼキューターが途中で停止しました。変更は元に戻しました。コマンドを含むため二度は実行しません", "the executor running job %[1]s stopped midway; its changes were undone. It has commands, so it is not run twice"},
	CodePatchInvalid:        {"提案のパッチを解釈できませんでした", "the patch cannot be parsed"},
	CodeUnexpected:          {"予期しないエラーが起きました（詳細はログにあります）", "an unexpected error (the log has the details)"},

	// Terms: what happened to a file (a job's state is a shared word: fault.States).
	TermChanged: {"変更されました", "was changed"},
	TermCreated: {"作成されました", "was created"},
	TermDeleted: {"削除されました", "was deleted"},
}

// The codes of Texts.
const (
	CodePathEmpty       = "PATH_EMPTY"
	CodePathNUL         = "PATH_NUL"
	CodePathNotUTF8     = "PATH_NOT_UTF8"
	CodePathAbsolute    = "PATH_ABSOLUTE"
	CodePathBackslash   = "PATH_BACKSLASH"
	CodePathDrive       = "PATH_DRIVE"
	CodePathHome        = "PATH_HOME"
	CodePathControl     = "PATH_CONTROL"
	CodePathComponent   = "PATH_COMPONENT_TOO_LONG"
	CodePathGit         = "PATH_IN_GIT_INTERNALS"
	CodePathIsWorkspace = "PATH_IS_WORKSPACE"
	CodeLeavesWorkspace = "LEAVES_WORKSPACE"

	CodeSymlinkInPath   = "SYMLINK_IN_PATH"
	CodeDanglingSymlink = "DANGLING_SYMLINK"
	CodeNotRegularFile  = "NOT_REGULAR_FILE"
	CodeHardLinks       = "HARD_LINKS"
	CodeIsDirectory     = "IS_DIRECTORY"
	CodeRenameExists    = "RENAME_TARGET_EXISTS"
	CodeFileMissing     = "FILE_MISSING"
	CodeFileIO          = "FILE_IO"

	CodeUnknownType   = "UNKNOWN_OPERATION_TYPE"
	CodeUnknownAction = "UNKNOWN_ACTION"
	CodeShellEmpty    = "SHELL_EMPTY"
	CodeShellNUL      = "SHELL_NUL"

	CodeDiffUnreadable      = "DIFF_UNREADABLE"
	CodeDiffEmpty           = "DIFF_EMPTY"
	CodeDiffMissesTarget    = "DIFF_MISSES_TARGET"
	CodeDiffCreatesExisting = "DIFF_CREATES_EXISTING"
	CodeDiffChangesMissing  = "DIFF_CHANGES_MISSING"
	CodeDiffConflict        = "DIFF_CONTEXT_MISMATCH"
	CodeDiffFailed          = "DIFF_FAILED"

	CodeExitStatus     = "EXIT_STATUS"
	CodeTimedOut       = "TIMED_OUT"
	CodeCancelled      = "CANCELLED"
	CodeKilledBySignal = "KILLED_BY_SIGNAL"
	CodeKilledCPU      = "KILLED_CPU_LIMIT"
	CodeKilledFileSize = "KILLED_FILE_SIZE_LIMIT"
	CodeNotStarted     = "NOT_STARTED"
	CodeNoSandbox      = "SANDBOX_UNAVAILABLE"

	CodeGitConfigUnreadable = "GIT_CONFIG_UNREADABLE"
	CodeGitConfigTooLarge   = "GIT_CONFIG_TOO_LARGE"
	CodeGitConfigUnsafe     = "GIT_CONFIG_UNSAFE"
	CodeGitAddPaths         = "GIT_ADD_NEEDS_PATHS"
	CodeGitCommitMessage    = "GIT_COMMIT_NEEDS_MESSAGE"
	CodeGitResetMode        = "GIT_RESET_MODE"
	CodeGitCheckoutOne      = "GIT_CHECKOUT_NEEDS_ONE"
	CodeGitPushInvalid      = "GIT_PUSH_INVALID"
	CodeGitTargetNUL        = "GIT_TARGET_NUL"
	CodeGitOption           = "GIT_OPTION_NOT_ALLOWED"
	CodeGitRef              = "GIT_REF_INVALID"

	CodeBridgeNotConfigured  = "BRIDGE_NOT_CONFIGURED"
	CodeBridgeUnreachable    = "BRIDGE_UNREACHABLE"
	CodeBridgeCallFailed     = "BRIDGE_CALL_FAILED"
	CodeBridgeToolError      = "BRIDGE_TOOL_ERROR"
	CodeBrowserNoTool        = "BROWSER_NO_TOOL"
	CodeBrowserNeedsURL      = "BROWSER_NEEDS_URL"
	CodeBrowserNeedsXY       = "BROWSER_NEEDS_XY"
	CodeBrowserNeedsTarget   = "BROWSER_NEEDS_TARGET"
	CodeBrowserNeedsSelector = "BROWSER_NEEDS_SELECTOR"
	CodeBrowserNeedsKeys     = "BROWSER_NEEDS_KEYS"
	CodeBrowserArgument      = "BROWSER_ARGUMENT"
	CodeScreenshotTooLarge   = "SCREENSHOT_TOO_LARGE"
	CodeScreenshotBad        = "SCREENSHOT_UNREADABLE"
	CodeScreenshotMissing    = "SCREENSHOT_MISSING"
	CodeScreenshotType       = "SCREENSHOT_NOT_IMAGE"
	CodeArtifactsMissing     = "ARTIFACTS_NOT_CONFIGURED"
	CodeArtifactsIO          = "ARTIFACTS_IO"

	CodeSnapshotFailed     = "SNAPSHOT_FAILED"
	CodeRollbackIncomplete = "ROLLBACK_INCOMPLETE"
	CodeCommitNoRepository = "COMMIT_NOT_A_REPOSITORY"
	CodeCommitStep         = "COMMIT_STEP_FAILED"

	CodeSandboxNoteOn          = "SANDBOX_NOTE_ON"
	CodeSandboxNoteNone        = "SANDBOX_NOTE_NONE"
	CodeSandboxNoteUnavailable = "SANDBOX_NOTE_UNAVAILABLE"

	CodeNotApproved         = "NOT_APPROVED"
	CodeHashMismatch        = "HASH_MISMATCH"
	CodeBrowserAutoApproved = "BROWSER_AUTO_APPROVED"
	CodeTakenOver           = "TAKEN_OVER"
	CodeStale               = "STALE_BASE"
	CodeStaleRetry          = "STALE_BASE_RETRY"
	CodeInterruptedKept     = "INTERRUPTED_CHANGES_KEPT"
	CodeInterruptedStuck    = "INTERRUPTED_NOT_UNDONE"
	CodeInterruptedUndone   = "INTERRUPTED_UNDONE"
	CodePatchInvalid        = "PATCH_INVALID"
	CodeUnexpected          = "UNEXPECTED"

	TermChanged = "FILE_CHANGED"
	TermCreated = "FILE_CREATED"
	TermDeleted = "FILE_DELETED"
)

// Fail is the failure code of Texts with args, of the kind of sentinel (nil: unclassified).
func Fail(sentinel error, code string, args ...any) error {
	return Texts.New(sentinel, code, args...)
}

// FailWith is Fail over the failure beneath (kept for the log, not shown).
func FailWith(sentinel, cause error, code string, args ...any) error {
	return Texts.Wrap(sentinel, cause, code, args...)
}

// State is a job state ("pending", "denied", …) as a word every catalog has (fault.States).
func State(status string) fault.Term { return fault.State(status) }

// Said is err as the user is told it in l: its message, or UNEXPECTED for a failure that has
// none (its words are for the log).
func Said(err error, l Locale) string {
	if text, ok := fault.Text(err, string(l)); ok {
		return text
	}
	return Texts.Text(string(l), CodeUnexpected)
}
