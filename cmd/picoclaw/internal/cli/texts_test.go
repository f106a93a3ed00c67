package cli

import (
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
)

// technical are the words the Japanese texts keep as they are: commands, flags, variables, keys
// and values typed as they are.
var technical = []string{"ID", "API", "URL", "HTTP", "MB", "Bearer", "picoclaw", "run", "keys", "chmod", "uid", "pid", "sha256",
	"bash", "zsh", "fish", "powershell", "on", "off", "auto", "text", "json", "line", "slack", "inbox", "outbox", "true", "false",
	"list", "channel", "queue", "id", "job_YYYYMMDD_NNN", "line:outbox:1700000000000-0", "/help", "/quit",
	"--help", "--chat", "--service", "--data", "--channel", "--queue", "--limit", "--log-keep", "--log-max-age", "--log-max-size",
	"--output", "--policy", "--config", "approval.policy_file", "services.cli.listen",
	"PICOCLAW_TOKEN", "PICOCLAW_SERVICE_KEY"}

// TestEveryText renders every text of the CLI in Japanese and English with arguments as they
// come (ids, paths, flags, a peer's words): the Japanese has no English but the technical words
// and the arguments, the English no Japanese, and each argument is in both. A code added to
// texts must be added here.
func TestEveryText(t *testing.T) {
	if err := texts.Check(); err != nil {
		t.Fatal(err)
	}
	if err := texts.CheckLanguages(technical...); err != nil {
		t.Fatal(err)
	}
	const (
		path = "/home/u/.config/picoclaw.yaml"
		job  = "job_20261128_001"
		url  = "http://127.0.0.1:8090"
	)
	tests := []struct {
		code string
		args []any
	}{
		{txtArgUnexpected, []any{`"extra"`}},
		{txtCmdUnknown, []any{`"frobnicate"`}},
		{txtCmdUnknownHint, []any{`"jbos"`, "job, jobs"}},
		{txtSubUnknown, []any{"auto-approve", `"sometimes"`, "off, on, status"}},
		{txtSubExpected, []any{"off, on, status"}},
		{txtArgsJobID, nil},
		{txtArgsDeadLetter, nil},
		{txtArgsPatchFile, nil},
		{txtArgsShell, nil},
		{txtJobID, []any{`"job_x"`}},
		{txtOutput, []any{`"yaml"`}},
		{txtFlagUnknown, []any{"--bogus"}},
		{txtFlagNeedsValue, []any{"--limit"}},
		{txtFlagValue, []any{"--ttl", `"soon"`, fault.Term(txtTypeDuration)}},
		{txtFlagSyntax, []any{"---x"}},
		{txtFlagOther, []any{"required flag(s) \"x\" not set"}},
		{txtTypeInt, nil},
		{txtTypeNumber, nil},
		{txtTypeDuration, nil},
		{txtTypeBool, nil},
		{txtTypeValue, nil},
		{txtUsageHint, []any{"picoclaw jobs [flags]", "picoclaw jobs"}},
		{txtChatMode, []any{`"sometimes"`}},
		{txtLogMaxSize, []any{"0"}},
		{txtLogMaxAge, []any{"10s"}},
		{txtLogKeep, []any{"-1"}},
		{txtDLChannel, []any{`"fax"`}},
		{txtDLQueue, []any{`"spool"`}},
		{txtDLLimit, nil},
		{txtDLID, []any{`"fax:1"`}},
		{txtPolicyRemote, nil},
		{txtConfigService, []any{"approval, executor", `"x"`}},
		{txtNoFile, nil},
		{txtNoPermission, nil},
		{txtFileExists, nil},
		{txtFileError, []any{path, "is a directory"}},
		{txtPatchFile, []any{"fix.patch", fault.Term(txtNoFile)}},
		{txtConfigRead, []any{path, fault.Term(txtNoPermission)}},
		{txtConfigDecode, []any{path, "locale: must be ja or en"}},
		{txtConfigInvalid, []any{"services.approval.url: must be set"}},
		{txtConfigProblems, []any{fault.Term(txtConfigNoFile), "2", "  a: x\n  b: y"}},
		{txtConfigNoFile, nil},
		{txtStateOpen, []any{path, "-rw-r--r--"}},
		{txtStateOwner, []any{path, "1001"}},
		{txtStateBad, []any{path, "unexpected end of JSON input"}},
		{txtCredOpen, []any{path, "-rw-r--r--"}},
		{txtCredShort, []any{path, "32"}},
		{txtCredIO, []any{path, fault.Term(txtNoPermission)}},
		{txtKeysMissing, []any{path, "executor"}},
		{txtKeysBad, []any{path, "unexpected end of JSON input"}},
		{txtNoServiceKey, nil},
		{txtNoSuite, nil},
		{txtStaleSuite, []any{path}},
		{txtCredentials, []any{"auth.public_keys: PICOCLAW_AUTH_PUBLIC_KEYS: bad entry"}},
		{txtAuditTampered, []any{"1", "4"}},
		{txtAuditNotFound, []any{"audit job_20261128_001: not found"}},
		{txtAuditSetup, []any{"approval.sqlite_path: must be set"}},
		{txtPolicyFailed, []any{"approval.policy_file: rule x: undeclared reference"}},
		{txtDataDirLocked, []any{"/srv/data", "4242"}},
		{txtDataDir, []any{"/srv/data", fault.Term(txtNoPermission)}},
		{txtDatabase, []any{"/srv/data/audit.db", "file is not a database"}},
		{txtCompactFailed, []any{"audit.db", "database is locked"}},
		{txtExportOpen, []any{"out.jsonl", fault.Term(txtFileExists)}},
		{txtExportFailed, []any{"state.db", "database is locked"}},
		{txtExported, []any{"120"}},
		{txtListenFailed, []any{"127.0.0.1:9010", "address already in use"}},
		{txtChatWelcome, []any{"cli:tester"}},
		{txtServiceStopped, []any{"approval", "listen tcp: address already in use", "/srv/data/suite.log"}},
		{txtStoppedStarting, []any{"executor", "sandbox: bwrap not found", "/srv/data/suite.log"}},
		{txtNotHealthy, []any{"chat-mio", "1m0s", "/srv/data/suite.log"}},
		{txtStateNotWritten, []any{path, "read-only file system"}},
		{txtStillStopping, []any{"2s"}},
		{txtTokenMissing, []any{"approval"}},
		{txtTokenStale, []any{"gateway-line", path}},
		{txtNotRunning, []any{"heartbeat", url}},
		{txtUnreachable, []any{"approval", url, "no route to host"}},
		{txtRESTError, []any{"ジョブ " + job + " は見つかりません", "not_found", "404"}},
		{txtBadAnswer, []any{"approval", "invalid character '<'"}},
		{txtPeerError, []any{"heartbeat", "permission_denied", "the caller is not allowed"}},
		{txtExecuteFailed, []any{"ジョブ " + job + " は却下済みのため実行できません"}},
		{txtRanWithFailure, nil},
		{txtJobSummary, nil},
		{txtJobFiles, []any{"docs/a.md, docs/b.md", "2", "10", "3"}},
		{txtJobFlags, nil},
		{txtJobPolicy, nil},
		{txtJobDeny, nil},
		{txtJobHash, nil},
		{txtJobTrailOK, nil},
		{txtJobTrailBad, nil},
		{txtJobsHeader, nil},
		{txtImagesHeader, nil},
		{txtDeadLettersHeader, nil},
		{txtYes, nil},
		{txtNo, nil},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		seen[tc.code] = true
		if !texts.Has(tc.code) {
			t.Errorf("%s is not in texts", tc.code)
			continue
		}
		m := texts.New(nil, tc.code, tc.args...)
		ja, en := m.Text("ja"), m.Text("en")
		if en != m.Error() {
			t.Errorf("%s: Error() %q is not the English text %q", tc.code, m.Error(), en)
		}
		rest := ja
		for _, a := range tc.args {
			arg, ok := a.(string)
			if !ok {
				continue // a Term: a word of the catalog, said in the message's language
			}
			if !strings.Contains(ja, arg) || !strings.Contains(en, arg) {
				t.Errorf("%s: argument %q missing in %q / %q", tc.code, arg, ja, en)
			}
			rest = strings.ReplaceAll(rest, arg, " ")
		}
		if w := fault.EnglishWords(rest, technical...); len(w) > 0 || !fault.HasJapanese(ja) {
			t.Errorf("%s: English in the Japanese %q: %q", tc.code, ja, w)
		}
		enRest := en
		for _, a := range tc.args {
			if s, ok := a.(string); ok {
				enRest = strings.ReplaceAll(enRest, s, " ")
			}
		}
		if fault.HasJapanese(enRest) {
			t.Errorf("%s: Japanese in the English %q", tc.code, en)
		}
	}
	texts.ReportUncovered(t.Errorf, func(code string) bool { return seen[code] })
}

// A word of the catalog in an argument (what is wrong with a file, a value's type) is said in
// the message's language.
func TestTermsInTheMessagesLanguage(t *testing.T) {
	for _, tc := range []struct {
		m      *fault.Message
		ja, en string
	}{
		{texts.New(nil, txtPatchFile, "fix.patch", fault.Term(txtNoFile)),
			"パッチファイル fix.patch を読めません（ファイルがありません）", "patch file fix.patch: no such file or directory"},
		{texts.New(nil, txtFlagValue, "--limit", `"many"`, fault.Term(txtTypeInt)),
			`フラグ --limit の値 "many" は使えません。整数を指定してください`, `invalid value "many" for --limit: want an integer`},
		{texts.New(nil, txtConfigProblems, fault.Term(txtConfigNoFile), "1", "  locale: must be ja or en"),
			"（ファイルなし: 既定値と環境変数）: 問題が 1 件あります:\n  locale: must be ja or en",
			"(no file: defaults and environment): 1 problem(s):\n  locale: must be ja or en"},
	} {
		if ja, en := tc.m.Text("ja"), tc.m.Text("en"); ja != tc.ja || en != tc.en {
			t.Errorf("%s: %q / %q, want %q / %q", tc.m.Code, ja, en, tc.ja, tc.en)
		}
	}
}
