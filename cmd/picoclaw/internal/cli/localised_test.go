package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// firstLine is the first line a command printed on standard error.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestErrorsInTheUsersLanguage: what the approval service refuses (an unknown job, a decided
// one, a token of nobody) reaches the user in Japanese by default and in English with --locale
// en or the config's locale — the service's own words with its stable code — with the same exit
// code; -o json reports the failure as {code, message}.
func TestErrorsInTheUsersLanguage(t *testing.T) {
	internal, url := startApproval(t)
	requestApproval(t, internal, "job_20261128_001", "docs/a.md")
	if code, _, errOut := run(t, url, token, "deny", "job_20261128_001"); code != ExitOK {
		t.Fatalf("deny: %d %s", code, errOut)
	}
	enConfig := filepath.Join(t.TempDir(), "picoclaw.yaml")
	if err := os.WriteFile(enConfig, []byte("locale: en\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		tok    string
		args   []string
		exit   int
		code   string
		ja, en string
	}{
		{"unknown job", token, []string{"job", "job_20261128_999"}, ExitNotFound, "not_found",
			"picoclaw job: ジョブ job_20261128_999 は見つかりません（コード not_found、HTTP 404）",
			"picoclaw job: job job_20261128_999 not found (code not_found, HTTP 404)"},
		{"decided job", token, []string{"approve", "job_20261128_001"}, ExitConflict, "conflict",
			"picoclaw approve: ジョブ job_20261128_001 はすでに却下済みです（コード conflict、HTTP 409）",
			"picoclaw approve: job job_20261128_001 is already denied (code conflict, HTTP 409)"},
		{"a token of nobody", "not-a-known-token-000000", []string{"jobs"}, ExitUnauthorized, "unknown_approver",
			"picoclaw jobs: このトークンは承認者のものではありません（コード unknown_approver、HTTP 403）",
			"picoclaw jobs: the token does not belong to an approver (code unknown_approver, HTTP 403)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []struct {
				label string
				args  []string
				want  string
			}{
				{"default", tc.args, tc.ja},
				{"--locale ja", append([]string{"--locale", "ja"}, tc.args...), tc.ja},
				{"--locale en", append([]string{"--locale", "en"}, tc.args...), tc.en},
			} {
				code, _, errOut := run(t, url, tc.tok, v.args...)
				if code != tc.exit || firstLine(errOut) != v.want {
					t.Errorf("%s: exit %d %q, want %d %q", v.label, code, firstLine(errOut), tc.exit, v.want)
				}
			}
			// The config's locale, when no flag says otherwise.
			code, _, errOut := run(t, url, tc.tok, append([]string{"--config", enConfig}, tc.args...)...)
			if code != tc.exit || firstLine(errOut) != tc.en {
				t.Errorf("locale: en in the config: exit %d %q", code, errOut)
			}
			if tc.args[0] == "approve" {
				return // no machine output
			}
			// Machine output: a stable code beside the service's message.
			code, out, errOut := run(t, url, tc.tok, append(tc.args, "-o", "json")...)
			var body map[string]string
			_, jaMessage, _ := strings.Cut(tc.ja, ": ")
			jaMessage, _, _ = strings.Cut(jaMessage, "（コード ")
			if code != tc.exit || out != "" || json.Unmarshal([]byte(errOut), &body) != nil || body["code"] != tc.code || body["message"] != jaMessage {
				t.Errorf("-o json: exit %d %q %q, want code %q message %q", code, out, errOut, tc.code, jaMessage)
			}
		})
	}
}

// TestErrorsWhenTheSuiteIsNotRunning: with no suite to talk to — nothing listening at the URL,
// no run state, a run state left by a stopped suite, the heartbeat down — the user is told so in
// their language, with the exit codes scripts rely on.
func TestErrorsWhenTheSuiteIsNotRunning(t *testing.T) {
	home := t.TempDir()
	stale := t.TempDir()
	statePath := filepath.Join(stale, ".local", "state", "picoclaw", "run.json")
	if err := writeRunState(statePath, runState{RESTURL: "http://127.0.0.1:1/v1/", Token: token, PID: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	heartbeatDown := map[string]string{"HOME": home, "PICOCLAW_SERVICES_HEARTBEAT_URL": "http://127.0.0.1:1"}
	for _, kv := range testinfra.AuthEnv(svcauth.CLI) {
		k, v, _ := strings.Cut(kv, "=")
		heartbeatDown[k] = v
	}
	tests := []struct {
		name   string
		env    map[string]string
		args   []string
		exit   int
		ja, en string
	}{
		{"nothing at the URL", map[string]string{"HOME": home, "PICOCLAW_TOKEN": token}, []string{"jobs", "--approval-url", "http://127.0.0.1:1"}, ExitUnavailable,
			"picoclaw jobs: approval（http://127.0.0.1:1）に接続できません。動いていないようです（picoclaw run で起動するか、URL を確かめてください）",
			"picoclaw jobs: approval is not running at http://127.0.0.1:1 (connection refused): start it with `picoclaw run` or check the URL"},
		{"no run state", map[string]string{"HOME": home}, []string{"status"}, ExitError,
			"picoclaw status: 動いているスイートが見つかりません（picoclaw run で起動してください）。ほかのスイートに接続するときは PICOCLAW_SERVICE_KEY と --config を指定してください",
			"picoclaw status: no running suite was found (start one with `picoclaw run`); to reach another suite, set PICOCLAW_SERVICE_KEY and --config"},
		{"a stopped suite's run state", map[string]string{"HOME": stale}, []string{"status"}, ExitError,
			"picoclaw status: " + statePath + " に記録されたスイートはもう動いていません（picoclaw run で起動してください）",
			"picoclaw status: the suite recorded in " + statePath + " is no longer running (start it with `picoclaw run`)"},
		{"a stopped suite's run state, REST", map[string]string{"HOME": stale}, []string{"jobs"}, ExitUnauthorized,
			"picoclaw jobs: PICOCLAW_TOKEN が設定されていません（approval の API には承認者の Bearer トークンが必要です）。" + statePath + " に記録されたスイートはもう動いていません（picoclaw run で起動してください）",
			"picoclaw jobs: PICOCLAW_TOKEN is not set (the approval API needs an approver's bearer token); the suite recorded in " + statePath + " is no longer running (start it with `picoclaw run`)"},
		{"the heartbeat down", heartbeatDown, []string{"status"}, ExitUnavailable,
			"picoclaw status: heartbeat（http://127.0.0.1:1）に接続できません。動いていないようです（picoclaw run で起動するか、URL を確かめてください）",
			"picoclaw status: heartbeat is not running at http://127.0.0.1:1 (connection refused): start it with `picoclaw run` or check the URL"},
	}
	// Machine output: the CLI's own failures have stable codes too.
	for _, tc := range []struct {
		env  map[string]string
		args []string
		exit int
		code string
	}{
		{map[string]string{"HOME": home, "PICOCLAW_TOKEN": token}, []string{"jobs", "-o", "json", "--approval-url", "http://127.0.0.1:1"}, ExitUnavailable, "unavailable"},
		{map[string]string{"HOME": home}, []string{"jobs", "-o", "json"}, ExitUnauthorized, "token_missing"},
		{map[string]string{"HOME": home}, []string{"status", "--json"}, ExitError, "suite_not_running"},
		{map[string]string{"HOME": home}, []string{"jobs", "extra", "-o", "json"}, ExitUsage, "arg_unexpected"},
	} {
		code, out, errOut := runEnv(tc.env, tc.args...)
		var body map[string]string
		if code != tc.exit || out != "" || json.Unmarshal([]byte(errOut), &body) != nil || body["code"] != tc.code || !fault.HasJapanese(body["message"]) {
			t.Errorf("%v: exit %d %q %q, want %d and code %q", tc.args, code, out, errOut, tc.exit, tc.code)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runEnv(tc.env, tc.args...)
			if code != tc.exit || firstLine(errOut) != tc.ja {
				t.Errorf("ja: exit %d %q, want %d %q", code, firstLine(errOut), tc.exit, tc.ja)
			}
			code, _, errOut = runEnv(tc.env, append([]string{"--locale", "en"}, tc.args...)...)
			if code != tc.exit || firstLine(errOut) != tc.en {
				t.Errorf("en: exit %d %q, want %d %q", code, firstLine(errOut), tc.exit, tc.en)
			}
		})
	}
}

// A service's refusal with a LocalizedMessage (the executor passing approval's on) is shown as
// the service said it, in the locale the CLI asked for; its reason is the stable code and its
// Connect code the exit code.
func TestPeerErrorPassesTheServicesWordsOn(t *testing.T) {
	catalog := fault.Catalog{"NOT_APPROVED": {"ジョブ %[1]s は%[2]sのため実行できません", "job %[1]s is %[2]s, not approved"}}
	refused := catalog.New(fault.New(fault.Conflict, "conflict"), "NOT_APPROVED", "job_20261128_001", "denied")
	for _, tc := range []struct {
		locale, want, said string
	}{
		{"ja", "承認しましたが、実行に失敗しました: ジョブ job_20261128_001 はdeniedのため実行できません", "ジョブ job_20261128_001 はdeniedのため実行できません"},
		{"en", "approved, but execution failed: job job_20261128_001 is denied, not approved", "job job_20261128_001 is denied, not approved"},
	} {
		wire := rpcserver.ToConnectIn(context.Background(), slog.New(slog.DiscardHandler), "executor", refused, tc.locale)
		if got := sayError(fmt.Errorf("handle: %w", wire), tc.locale); got != tc.said {
			t.Errorf("%s: a Connect error as it comes: %q", tc.locale, got)
		}
		err := peerError("executor", "http://127.0.0.1:8095", wire)
		if got := sayError(err, tc.locale); got != tc.said || codeOf(err) != ExitConflict || errorCode(err) != "not_approved" {
			t.Errorf("%s: %q exit %d code %q", tc.locale, got, codeOf(err), errorCode(err))
		}
		var ce *connect.Error
		if !errors.As(err, &ce) || ce.Code() != connect.CodeAborted {
			t.Errorf("%s: the Connect error is not in the chain: %v", tc.locale, err)
		}
		// As `approve` reports an execution the executor refused.
		g := &globals{locale: tc.locale}
		if got := sayError(executeFailed(g, err), tc.locale); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.locale, got, tc.want)
		}
	}
}
