package cli

import (
	"errors"
	"io/fs"
	"strings"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
)

// texts are the CLI's words for what it reports — its errors and the lines it says about what
// it did — in Japanese (the default) and English (--locale en, or the config's locale), by code.
// The arguments are data: ids, paths, flags, values, and what a peer or the system said.
// Help text (cobra usage) stays English.
var texts = fault.Catalog{
	// The command line.
	txtArgUnexpected:  {"余分な引数 %[1]s があります", "unexpected argument %[1]s"},
	txtCmdUnknown:     {"コマンド %[1]s はありません", "unknown command %[1]s"},
	txtCmdUnknownHint: {"コマンド %[1]s はありません（近いもの: %[2]s）", "unknown command %[1]s; did you mean %[2]s?"},
	txtSubUnknown:     {"%[1]s にコマンド %[2]s はありません（%[3]s のどれか）", "unknown %[1]s command %[2]s (want %[3]s)"},
	txtSubExpected:    {"コマンドを指定してください: %[1]s", "expected a subcommand: %[1]s"},
	txtArgsJobID:      {"ジョブ ID を 1 つ指定してください", "expected exactly one job id"},
	txtArgsDeadLetter: {"デッドレターの ID（<channel>:<queue>:<id>、list の表示どおり）を 1 つ指定してください", "expected one dead letter id (<channel>:<queue>:<id>, as list shows it)"},
	txtArgsPatchFile:  {"パッチファイルを 1 つ指定してください", "expected one patch file"},
	txtArgsShell:      {"シェルを 1 つ指定してください: bash, zsh, fish, powershell", "expected one shell: bash, zsh, fish or powershell"},
	txtJobID:          {"ジョブ ID %[1]s の形が正しくありません（job_YYYYMMDD_NNN）", "invalid job id %[1]s (expected job_YYYYMMDD_NNN)"},
	txtOutput:         {"--output は text か json にしてください（指定: %[1]s）", "--output must be text or json, got %[1]s"},
	txtFlagUnknown:    {"フラグ %[1]s はありません", "unknown flag: %[1]s"},
	txtFlagNeedsValue: {"フラグ %[1]s には値が必要です", "flag needs an argument: %[1]s"},
	txtFlagValue:      {"フラグ %[1]s の値 %[2]s は使えません。%[3]sを指定してください", "invalid value %[2]s for %[1]s: want %[3]s"},
	txtFlagSyntax:     {"フラグの書き方が正しくありません: %[1]s", "bad flag syntax: %[1]s"},
	txtFlagOther:      {"フラグが正しくありません: %[1]s", "flags: %[1]s"},
	txtTypeInt:        {"整数", "an integer"},
	txtTypeNumber:     {"数値", "a number"},
	txtTypeDuration:   {"期間（例: 30m, 1h）", "a duration (e.g. 30m, 1h)"},
	txtTypeBool:       {"true か false", "true or false"},
	txtTypeValue:      {"正しい値", "a valid value"},
	txtUsageHint:      {"使い方: %[1]s\n（フラグの一覧: %[2]s --help）", "usage: %[1]s\n(`%[2]s --help` lists the flags)"},
	txtChatMode:       {"--chat は on, off, auto のどれかにしてください（指定: %[1]s）", "--chat must be on, off or auto, got %[1]s"},
	txtLogMaxSize:     {"--log-max-size は 1（MB）以上にしてください（指定: %[1]s）", "--log-max-size must be at least 1 (MB), got %[1]s"},
	txtLogMaxAge:      {"--log-max-age は 1m 以上にしてください（指定: %[1]s）", "--log-max-age must be at least 1m, got %[1]s"},
	txtLogKeep:        {"--log-keep は 0 以上にしてください（指定: %[1]s）", "--log-keep must not be negative, got %[1]s"},
	txtDLChannel:      {"--channel は line か slack にしてください（指定: %[1]s）", "--channel must be line or slack, got %[1]s"},
	txtDLQueue:        {"--queue は inbox か outbox にしてください（指定: %[1]s）", "--queue must be inbox or outbox, got %[1]s"},
	txtDLLimit:        {"--limit は 1〜500 にしてください", "--limit must be 1..500"},
	txtDLID:           {"デッドレター ID %[1]s の形が正しくありません（<channel>:<queue>:<id>、例: line:outbox:1700000000000-0）", "dead letter id %[1]s: want <channel>:<queue>:<id> (e.g. line:outbox:1700000000000-0)"},
	txtPolicyRemote:   {"--policy はオフラインの評価用です。サービスは自身の approval.policy_file を使います", "--policy is for offline tests; the service uses its own approval.policy_file"},
	txtConfigService:  {"--service は %[1]s のどれかにしてください（指定: %[2]s）", "--service must be one of %[1]s, got %[2]s"},

	// Files and configuration.
	txtNoFile:          {"ファイルがありません", "no such file or directory"},
	txtNoPermission:    {"権限がありません", "permission denied"},
	txtFileExists:      {"すでにあります", "file exists"},
	txtFileError:       {"%[1]s を扱えません（%[2]s）", "%[1]s: %[2]s"},
	txtPatchFile:       {"パッチファイル %[1]s を読めません（%[2]s）", "patch file %[1]s: %[2]s"},
	txtConfigRead:      {"設定ファイル %[1]s を読めません（%[2]s）", "read config %[1]s: %[2]s"},
	txtConfigDecode:    {"設定ファイル %[1]s に問題があります: %[2]s", "config %[1]s: %[2]s"},
	txtConfigInvalid:   {"設定が正しくありません: %[1]s", "invalid config: %[1]s"},
	txtConfigProblems:  {"%[1]s: 問題が %[2]s 件あります:\n%[3]s", "%[1]s: %[2]s problem(s):\n%[3]s"},
	txtConfigNoFile:    {"（ファイルなし: 既定値と環境変数）", "(no file: defaults and environment)"},
	txtStateOpen:       {"状態ファイル %[1]s をほかのユーザーが読めます（モード %[2]s）。chmod 600 してください", "run state %[1]s can be read by others (mode %[2]s); chmod 600 it"},
	txtStateOwner:      {"状態ファイル %[1]s はほかのユーザー（uid %[2]s）のものなので使いません", "run state %[1]s belongs to another user (uid %[2]s); it is not used"},
	txtStateBad:        {"状態ファイル %[1]s を読めません（%[2]s）", "run state %[1]s: %[2]s"},
	txtCredOpen:        {"認証情報 %[1]s をほかのユーザーが読めます（モード %[2]s）。chmod 600 してください", "credentials: %[1]s can be read by others (mode %[2]s); chmod 600 it"},
	txtCredShort:       {"認証情報 %[1]s が %[2]s バイトより短いです", "credentials: %[1]s holds fewer than %[2]s bytes"},
	txtCredIO:          {"認証情報 %[1]s を読み書きできません（%[2]s）", "credentials: %[1]s: %[2]s"},
	txtKeysMissing:     {"%[1]s に %[2]s の鍵がありません（ファイルを消すと新しい組が作られます）", "%[1]s: no key for %[2]s (remove the file to make a new set)"},
	txtKeysBad:         {"鍵のファイル %[1]s を読めません: %[2]s", "%[1]s: %[2]s"},
	txtNoServiceKey:    {"PICOCLAW_SERVICE_KEY が設定されていません（端末の鍵。picoclaw keys で鍵の組を作れます）", "PICOCLAW_SERVICE_KEY is not set (the terminal's key; `picoclaw keys` makes a set)"},
	txtNoSuite:         {"動いているスイートが見つかりません（picoclaw run で起動してください）。ほかのスイートに接続するときは PICOCLAW_SERVICE_KEY と --config を指定してください", "no running suite was found (start one with `picoclaw run`); to reach another suite, set PICOCLAW_SERVICE_KEY and --config"},
	txtStaleSuite:      {"%[1]s に記録されたスイートはもう動いていません（picoclaw run で起動してください）", "the suite recorded in %[1]s is no longer running (start it with `picoclaw run`)"},
	txtCredentials:     {"端末の認証情報を読み込めません: %[1]s", "terminal credentials: %[1]s"},
	txtAuditTampered:   {"%[2]s 件のジョブとストリームのうち %[1]s 件で改ざんが見つかりました", "tampering detected in %[1]s of %[2]s jobs and streams"},
	txtAuditNotFound:   {"検証する監査ログが見つかりません: %[1]s", "nothing to verify: %[1]s"},
	txtAuditSetup:      {"監査ログを読めません: %[1]s", "audit log: %[1]s"},
	txtPolicyFailed:    {"ポリシーを評価できません: %[1]s", "policy: %[1]s"},
	txtDataDirLocked:   {"データディレクトリ %[1]s はほかの picoclaw（pid %[2]s）が使っています。先に止めるか --data を指定してください", "data directory %[1]s is in use by another picoclaw (pid %[2]s); stop it first or use --data"},
	txtDataDir:         {"データディレクトリ %[1]s を使えません（%[2]s）", "data directory %[1]s: %[2]s"},
	txtDatabase:        {"データベース %[1]s を開けません: %[2]s", "%[1]s: %[2]s"},
	txtCompactFailed:   {"%[1]s を圧縮できませんでした: %[2]s", "compact %[1]s: %[2]s"},
	txtExportOpen:      {"%[1]s に書き出せません（%[2]s）。新しいファイルを指定してください", "export to %[1]s: %[2]s (choose a new file)"},
	txtExportFailed:    {"%[1]s を書き出せませんでした: %[2]s", "export %[1]s: %[2]s"},
	txtExported:        {"%[1]s 行を書き出しました", "exported %[1]s rows"},
	txtListenFailed:    {"通知を %[1]s（services.cli.listen）で待ち受けられません: %[2]s", "listen for notifications on %[1]s (services.cli.listen): %[2]s"},
	txtChatWelcome:     {"セッション %[1]s — /help でコマンド一覧、/quit で終了", "session %[1]s — /help for commands, /quit to leave"},
	txtServiceStopped:  {"%[1]s が停止しました: %[2]s（%[3]s を見てください）", "%[1]s stopped: %[2]s (see %[3]s)"},
	txtStoppedStarting: {"%[1]s が起動中に停止しました: %[2]s（%[3]s を見てください）", "%[1]s stopped while starting: %[2]s (see %[3]s)"},
	txtNotHealthy:      {"%[1]s が %[2]s 以内に起動しませんでした（%[3]s を見てください）", "%[1]s did not become healthy within %[2]s (see %[3]s)"},
	txtStateNotWritten: {"状態ファイル %[1]s を書けませんでした: %[2]s", "run state %[1]s not written: %[2]s"},
	txtStillStopping:   {"%[1]s 経ってもサービスが停止していません。待たずに終了します", "services still stopping after %[1]s; leaving them"},

	// Talking to the suite.
	txtTokenMissing:   {"PICOCLAW_TOKEN が設定されていません（%[1]s の API には承認者の Bearer トークンが必要です）", "PICOCLAW_TOKEN is not set (the %[1]s API needs an approver's bearer token)"},
	txtTokenStale:     {"PICOCLAW_TOKEN が設定されていません（%[1]s の API には承認者の Bearer トークンが必要です）。%[2]s に記録されたスイートはもう動いていません（picoclaw run で起動してください）", "PICOCLAW_TOKEN is not set (the %[1]s API needs an approver's bearer token); the suite recorded in %[2]s is no longer running (start it with `picoclaw run`)"},
	txtNotRunning:     {"%[1]s（%[2]s）に接続できません。動いていないようです（picoclaw run で起動するか、URL を確かめてください）", "%[1]s is not running at %[2]s (connection refused): start it with `picoclaw run` or check the URL"},
	txtUnreachable:    {"%[1]s（%[2]s）に接続できません: %[3]s", "%[1]s unreachable at %[2]s: %[3]s"},
	txtRESTError:      {"%[1]s（コード %[2]s、HTTP %[3]s）", "%[1]s (code %[2]s, HTTP %[3]s)"},
	txtBadAnswer:      {"%[1]s の API から読めない応答がありました: %[2]s", "unexpected answer from the %[1]s API: %[2]s"},
	txtPeerError:      {"%[1]s がエラーを返しました（%[2]s）: %[3]s", "%[1]s answered with an error (%[2]s): %[3]s"},
	txtExecuteFailed:  {"承認しましたが、実行に失敗しました: %[1]s", "approved, but execution failed: %[1]s"},
	txtRanWithFailure: {"ジョブは実行されましたが、失敗した操作があります", "the job ran with failures"},

	// What a command says it did or found.
	txtJobSummary:  {"概要", "summary"},
	txtJobFiles:    {"ファイル: %[1]s（%[2]s ファイル, +%[3]s -%[4]s）", "files: %[1]s (%[2]s files, +%[3]s -%[4]s)"},
	txtJobFlags:    {"要注意", "attention"},
	txtJobPolicy:   {"ポリシー", "policy"},
	txtJobDeny:     {"却下の理由", "deny reason"},
	txtJobHash:     {"内容の sha256", "content sha256"},
	txtJobTrailOK:  {"監査ログ（ハッシュチェーン: 正常）:", "audit trail (hash chain ok):"},
	txtJobTrailBad: {"監査ログ（ハッシュチェーン: 不一致）:", "audit trail (hash chain BROKEN):"},

	// The headers of the lists the CLI prints as tables (columns separated by tabs) and their words.
	txtJobsHeader:        {"ジョブ\t状態\t経路\t依頼日時\t要約", "JOB\tSTATUS\tROUTE\tREQUESTED\tSUMMARY"},
	txtImagesHeader:      {"ジョブ\t送信日時\t送信先\t形式\tサイズ\tsha256\t保存", "JOB\tSENT\tTO\tTYPE\tSIZE\tSHA256\tKEPT"},
	txtDeadLettersHeader: {"ID\t失敗日時\t種類\t試行\tチャット\t再送日時\t理由", "ID\tDIED\tKIND\tTRIES\tCHAT\tREPLAYED\tREASON"},
	txtYes:               {"はい", "yes"},
	txtNo:                {"いいえ", "no"},
}

// The codes of texts.
const (
	txtArgUnexpected  = "ARG_UNEXPECTED"
	txtCmdUnknown     = "COMMAND_UNKNOWN"
	txtCmdUnknownHint = "COMMAND_UNKNOWN_HINT"
	txtSubUnknown     = "SUBCOMMAND_UNKNOWN"
	txtSubExpected    = "SUBCOMMAND_EXPECTED"
	txtArgsJobID      = "ARGS_JOB_ID"
	txtArgsDeadLetter = "ARGS_DEAD_LETTER_ID"
	txtArgsPatchFile  = "ARGS_PATCH_FILE"
	txtArgsShell      = "ARGS_SHELL"
	txtJobID          = "JOB_ID_INVALID"
	txtOutput         = "OUTPUT_FORMAT"
	txtFlagUnknown    = "FLAG_UNKNOWN"
	txtFlagNeedsValue = "FLAG_NEEDS_VALUE"
	txtFlagValue      = "FLAG_VALUE"
	txtFlagSyntax     = "FLAG_SYNTAX"
	txtFlagOther      = "FLAG_INVALID"
	txtTypeInt        = "TYPE_INT"
	txtTypeNumber     = "TYPE_NUMBER"
	txtTypeDuration   = "TYPE_DURATION"
	txtTypeBool       = "TYPE_BOOL"
	txtTypeValue      = "TYPE_VALUE"
	txtUsageHint      = "USAGE_HINT"
	txtChatMode       = "CHAT_MODE"
	txtLogMaxSize     = "LOG_MAX_SIZE"
	txtLogMaxAge      = "LOG_MAX_AGE"
	txtLogKeep        = "LOG_KEEP"
	txtDLChannel      = "DEAD_LETTER_CHANNEL"
	txtDLQueue        = "DEAD_LETTER_QUEUE"
	txtDLLimit        = "DEAD_LETTER_LIMIT"
	txtDLID           = "DEAD_LETTER_ID"
	txtPolicyRemote   = "POLICY_FILE_REMOTE"
	txtConfigService  = "CONFIG_SERVICE"

	txtNoFile          = "FILE_MISSING"
	txtNoPermission    = "FILE_PERMISSION"
	txtFileExists      = "FILE_EXISTS"
	txtFileError       = "FILE_ERROR"
	txtPatchFile       = "PATCH_FILE"
	txtConfigRead      = "CONFIG_READ"
	txtConfigDecode    = "CONFIG_DECODE"
	txtConfigInvalid   = "CONFIG_INVALID"
	txtConfigProblems  = "CONFIG_PROBLEMS"
	txtConfigNoFile    = "CONFIG_NO_FILE"
	txtStateOpen       = "STATE_FILE_OPEN"
	txtStateOwner      = "STATE_FILE_OWNER"
	txtStateBad        = "STATE_FILE_INVALID"
	txtCredOpen        = "CREDENTIALS_OPEN"
	txtCredShort       = "CREDENTIALS_SHORT"
	txtCredIO          = "CREDENTIALS_IO"
	txtKeysMissing     = "SERVICE_KEYS_INCOMPLETE"
	txtKeysBad         = "SERVICE_KEYS_INVALID"
	txtNoServiceKey    = "SERVICE_KEY_MISSING"
	txtNoSuite         = "SUITE_NOT_RUNNING"
	txtStaleSuite      = "SUITE_STOPPED"
	txtCredentials     = "CREDENTIALS_INVALID"
	txtAuditTampered   = "AUDIT_TAMPERED"
	txtAuditNotFound   = "AUDIT_NOT_FOUND"
	txtAuditSetup      = "AUDIT_UNREADABLE"
	txtPolicyFailed    = "POLICY_FAILED"
	txtDataDirLocked   = "DATA_DIR_LOCKED"
	txtDataDir         = "DATA_DIR"
	txtDatabase        = "DATABASE_OPEN"
	txtCompactFailed   = "COMPACT_FAILED"
	txtExportOpen      = "EXPORT_OPEN"
	txtExportFailed    = "EXPORT_FAILED"
	txtExported        = "EXPORTED"
	txtListenFailed    = "LISTEN_FAILED"
	txtChatWelcome     = "CHAT_WELCOME"
	txtServiceStopped  = "SERVICE_STOPPED"
	txtStoppedStarting = "SERVICE_STOPPED_STARTING"
	txtNotHealthy      = "SERVICE_NOT_HEALTHY"
	txtStateNotWritten = "STATE_FILE_NOT_WRITTEN"
	txtStillStopping   = "SERVICES_STILL_STOPPING"

	txtTokenMissing   = "TOKEN_MISSING"
	txtTokenStale     = "TOKEN_MISSING_SUITE_STOPPED"
	txtNotRunning     = "NOT_RUNNING"
	txtUnreachable    = "UNREACHABLE"
	txtRESTError      = "REST_ERROR"
	txtBadAnswer      = "BAD_ANSWER"
	txtPeerError      = "PEER_ERROR"
	txtExecuteFailed  = "EXECUTE_FAILED"
	txtRanWithFailure = "RAN_WITH_FAILURES"

	txtJobSummary  = "JOB_SUMMARY"
	txtJobFiles    = "JOB_FILES"
	txtJobFlags    = "JOB_ATTENTION"
	txtJobPolicy   = "JOB_POLICY"
	txtJobDeny     = "JOB_DENY_REASON"
	txtJobHash     = "JOB_CONTENT_HASH"
	txtJobTrailOK  = "JOB_TRAIL_OK"
	txtJobTrailBad = "JOB_TRAIL_BROKEN"

	txtJobsHeader        = "JOBS_HEADER"
	txtImagesHeader      = "IMAGES_HEADER"
	txtDeadLettersHeader = "DEAD_LETTERS_HEADER"
	txtYes               = "YES"
	txtNo                = "NO"
)

// header is the table header of code in locale, one cell per column.
func header(locale, code string) []string { return strings.Split(say(locale, code), "\t") }

// say is text in locale (the CLI's words for what it did or found).
func say(locale, code string, args ...string) string { return texts.Text(locale, code, args...) }

// usage is a mistake in the command line, said by code (exit 2).
func usage(code string, args ...any) error {
	return &usageError{err: texts.New(nil, code, args...)}
}

// failure is a failure said by code, with its exit code.
func failure(exit int, code string, args ...any) error {
	return &apiError{code: exit, err: texts.New(nil, code, args...)}
}

// failureOver is failure over the error beneath, which stays in the chain (errors.Is, the
// English text for logs) but is not shown.
func failureOver(exit int, cause error, code string, args ...any) error {
	return &apiError{code: exit, err: texts.Wrap(nil, cause, code, args...)}
}

// trouble is what is wrong with a file the CLI reads or writes, as a message's argument: a word
// of texts (missing, not permitted, already there) or the system's own words.
func trouble(err error) any {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fault.Term(txtNoFile)
	case errors.Is(err, fs.ErrPermission):
		return fault.Term(txtNoPermission)
	case errors.Is(err, fs.ErrExist):
		return fault.Term(txtFileExists)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// fileError is a file the CLI cannot read or write, with what is wrong with it.
func fileError(path string, err error) error {
	return texts.Wrap(nil, err, txtFileError, path, trouble(err))
}

// sayError is err as the user is told it in locale: the first message of the CLI or a peer in
// its chain (a Connect error's LocalizedMessage too), else its own (English) words — those of
// the system or a library.
func sayError(err error, locale string) string {
	if text, ok := fault.Text(err, locale); ok {
		return text
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		if text, ok := fault.Text(rpcserver.FromConnect(ce), locale); ok {
			return text
		}
	}
	return err.Error()
}

// errorCode is the stable code of err for machine output: a REST API's code, a peer's reason
// or Connect code, the CLI's own message code, else "error".
func errorCode(err error) string {
	var ae *apiError
	if errors.As(err, &ae) && ae.reason != "" {
		return ae.reason
	}
	if m := fault.MessageOf(err); m != nil && texts.Has(m.Code) {
		return strings.ToLower(m.Code)
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		if r := fault.ReasonOf(rpcserver.FromConnect(ce)); r != "" {
			return strings.ToLower(r)
		}
		return ce.Code().String()
	}
	var ue *usageError
	if errors.As(err, &ue) {
		return "usage"
	}
	return "error"
}
