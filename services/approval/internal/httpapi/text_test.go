//go:build !serveronly

package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/httpapi"
)

// technical are the words the Japanese texts keep as they are: parameters, commands, formats.
var technical = []string{"API", "ID", "limit", "offset", "job_YYYYMMDD_NNN", "ttl", "30m", "1h", "JSON", "patch", "since", "RFC", "24h",
	"picoclaw", "audit", "verify", "Auto-Approve"}

// TestEveryText says every text of the REST API in Japanese and English: the Japanese has no
// English but its technical words and the arguments, the English no Japanese, and a code added
// to Texts must be added here.
func TestEveryText(t *testing.T) {
	if err := httpapi.Texts.Check(); err != nil {
		t.Fatal(err)
	}
	if err := httpapi.Texts.CheckLanguages(technical...); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		code   string
		args   []string
		ja, en string
	}{
		{httpapi.TextNoRoute, nil, "この API はありません", "no such route"},
		{httpapi.TextMethod, nil, "この API ではこのメソッドは使えません", "method not allowed"},
		{httpapi.TextLimit, []string{"500"}, "limit は 1〜500 の整数にしてください", "limit must be 1..500"},
		{httpapi.TextOffset, nil, "offset は 0 以上の整数にしてください", "offset must be a non-negative integer"},
		{httpapi.TextStatus, []string{`"bogus"`, "pending, granted"}, `状態 "bogus" はありません（使えるもの: pending, granted）`, `unknown status "bogus" (known: pending, granted)`},
		{httpapi.TextJobID, []string{`"nonsense"`}, `ジョブ ID "nonsense" の形が正しくありません（job_YYYYMMDD_NNN）`, `invalid job id "nonsense" (expected job_YYYYMMDD_NNN)`},
		{httpapi.TextJobNotFound, []string{"job_20260301_404"}, "ジョブ job_20260301_404 は見つかりません", "job job_20260301_404 not found"},
		{httpapi.TextTTL, []string{`"soon"`}, `ttl "soon" を期間として読めません（例: 30m, 1h）`, `ttl "soon" is not a duration (e.g. 30m, 1h)`},
		{httpapi.TextBodyNotJSON, nil, "リクエストの本文を JSON として読めません", "invalid JSON body"},
		{httpapi.TextBodyField, []string{`"bogus"`}, `リクエストの本文に知らないフィールド "bogus" があります`, `invalid JSON body: unknown field "bogus"`},
		{httpapi.TextBodyType, []string{`"ttl"`, "string"}, `リクエストの本文のフィールド "ttl" の型が違います（string にしてください）`, `invalid JSON body: field "ttl" must be string`},
		{httpapi.TextBodyTooLarge, []string{"1048576"}, "リクエストの本文が大きすぎます（上限 1048576 バイト）", "request body too large (at most 1048576 bytes)"},
		{httpapi.TextPatchRequired, nil, "patch を指定してください", "patch is required"},
		{httpapi.TextSince, nil, "since は RFC 3339 の時刻か、24h のような正の期間にしてください", "since must be an RFC 3339 time or a positive duration such as 24h"},
		{httpapi.TextAuditTampered, nil, "監査ログがサービスの外で変更されています。このジョブについては何も決められません（picoclaw audit verify で確認してください）",
			"the audit log was changed outside the service; nothing is decided on it (picoclaw audit verify shows what was found)"},
		{httpapi.TextGrantLogBroken, nil, "Auto-Approve の監査ログを検証できないため、変更できません（picoclaw audit verify で確認してください）",
			"the Auto-Approve audit log does not verify, so it cannot be changed (picoclaw audit verify shows what was found)"},
		{httpapi.TextInternal, nil, "内部エラーが発生しました。時間をおいてもう一度お試しください", "internal error"},
		{httpapi.TextUnavailable, nil, "依存するサービスに接続できません。時間をおいてもう一度お試しください", "a dependency is unavailable; retry later"},
		{httpapi.TextInvalid, nil, "リクエストが正しくありません", "the request is not valid"},
		{httpapi.TextNotFound, nil, "見つかりません", "not found"},
		{httpapi.TextForbidden, nil, "この操作は許可されていません", "not allowed"},
		{httpapi.TextUnauthenticated, nil, "認証できませんでした", "not authenticated"},
		{httpapi.TextConflict, nil, "ほかの変更と重なりました。読み直してもう一度お試しください", "another change got there first; read again and retry"},
		{httpapi.TextPrecondition, nil, "今の状態ではこの操作はできません", "not possible in the current state"},
		{httpapi.TextExhausted, nil, "上限に達しました。しばらくしてからお試しください", "a limit was reached; retry later"},
		{httpapi.TextDataLoss, nil, "データの整合性を確認できませんでした", "data failed an integrity check"},
		{httpapi.TextCanceled, nil, "リクエストは取り消されました", "the request was cancelled"},
		{httpapi.TextDeadline, nil, "時間内に終わりませんでした", "the request ran out of time"},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		seen[tc.code] = true
		if !httpapi.Texts.Has(tc.code) {
			t.Errorf("%s is not in Texts", tc.code)
			continue
		}
		ja, en := httpapi.Texts.Text("ja", tc.code, tc.args...), httpapi.Texts.Text("en", tc.code, tc.args...)
		if ja != tc.ja || en != tc.en {
			t.Errorf("%s:\n ja %q\n want %q\n en %q\n want %q", tc.code, ja, tc.ja, en, tc.en)
		}
		words := ja
		for _, a := range tc.args {
			words = strings.ReplaceAll(words, a, " ")
		}
		if w := fault.EnglishWords(words, technical...); len(w) > 0 || !fault.HasJapanese(ja) {
			t.Errorf("%s: the Japanese text %q has English %q", tc.code, ja, w)
		}
		if fault.HasJapanese(en) {
			t.Errorf("%s: the English text %q has Japanese", tc.code, en)
		}
	}
	httpapi.Texts.ReportUncovered(t.Errorf, func(code string) bool { return seen[code] })
}

// TestSimulateTexts: a refused simulation names what the parser found, in both languages.
func TestSimulateTexts(t *testing.T) {
	if err := domain.SimulateTexts.Check(); err != nil {
		t.Fatal(err)
	}
	if err := domain.SimulateTexts.CheckLanguages(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		err    error
		ja, en string
	}{
		{domain.PatchUnreadable(errFixed("command 1: no target")), "パッチを解釈できません: command 1: no target", "patch: command 1: no target"},
		{domain.NoOperations(), "パッチに操作がありません", "patch has no operations"},
	} {
		ja, _ := fault.Text(tc.err, "ja")
		en, _ := fault.Text(tc.err, "en")
		if ja != tc.ja || en != tc.en || fault.KindOf(tc.err) != fault.Invalid {
			t.Errorf("%q / %q (%v), want %q / %q", ja, en, fault.KindOf(tc.err), tc.ja, tc.en)
		}
	}
}

type errFixed string

func (e errFixed) Error() string { return string(e) }

// TestErrorsInTheRequestLanguage: every error body keeps its status and stable code; its
// message is Japanese by default and English with ?locale=en or Accept-Language: en — for the
// API's own checks, the guard's refusals, the use cases' refusals and what is not found.
func TestErrorsInTheRequestLanguage(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.svc.RequestApproval(ctx, app.RequestInput{JobID: "job_20260301_001", Plan: "docs",
		Patch: `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"x"}]`, TaskType: "docs"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Deny(ctx, "job_20260301_001", domain.Actor{ID: "ops", Channel: "rest"}, "no", ""); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, path, auth string
		body                     any
		status                   int
		code                     string
		ja, en                   string
	}{
		{"job not found", http.MethodGet, "/v1/jobs/job_20260301_404", token, nil, 404, "not_found",
			"ジョブ job_20260301_404 は見つかりません", "job job_20260301_404 not found"},
		{"events not found", http.MethodGet, "/v1/jobs/job_20260301_404/events", token, nil, 404, "not_found",
			"ジョブ job_20260301_404 は見つかりません", "job job_20260301_404 not found"},
		{"malformed id", http.MethodPost, "/v1/jobs/nonsense/approve", token, nil, 400, "invalid_argument",
			`ジョブ ID "nonsense" の形が正しくありません（job_YYYYMMDD_NNN）`, `invalid job id "nonsense" (expected job_YYYYMMDD_NNN)`},
		{"already decided", http.MethodPost, "/v1/jobs/job_20260301_001/approve", token, nil, 409, "conflict",
			"ジョブ job_20260301_001 はすでに却下済みです", "job job_20260301_001 is already denied"},
		{"bad status", http.MethodGet, "/v1/jobs?status=bogus", token, nil, 400, "invalid_argument",
			`状態 "bogus" はありません（使えるもの: pending, granted, auto_approved, denied, expired, cancelled, executing, completed, failed, refused, answered）`,
			`unknown status "bogus" (known: pending, granted, auto_approved, denied, expired, cancelled, executing, completed, failed, refused, answered)`},
		{"bad limit", http.MethodGet, "/v1/images?limit=0", token, nil, 400, "invalid_argument",
			"limit は 1〜500 の整数にしてください", "limit must be 1..500"},
		{"bad ttl", http.MethodPut, "/v1/auto-approve", token, map[string]any{"ttl": "soon"}, 400, "invalid_argument",
			`ttl "soon" を期間として読めません（例: 30m, 1h）`, `ttl "soon" is not a duration (e.g. 30m, 1h)`},
		{"ttl over max", http.MethodPut, "/v1/auto-approve", token, map[string]any{"ttl": "48h"}, 400, "invalid_argument",
			"ttl 48h0m0s は上限 24h0m0s を超えています（approval.auto_approve.max_ttl）", "ttl 48h0m0s exceeds the maximum 24h0m0s (approval.auto_approve.max_ttl)"},
		{"unknown field", http.MethodPost, "/v1/jobs/job_20260301_001/deny", token, map[string]any{"why": "x"}, 400, "invalid_argument",
			`リクエストの本文に知らないフィールド "why" があります`, `invalid JSON body: unknown field "why"`},
		{"wrong type", http.MethodPost, "/v1/jobs/job_20260301_001/approve-similar", token, map[string]any{"ttl": 30}, 400, "invalid_argument",
			`リクエストの本文のフィールド "ttl" の型が違います（string にしてください）`, `invalid JSON body: field "ttl" must be string`},
		{"unreadable patch", http.MethodPost, "/v1/policy/simulate", token, map[string]any{"patch": "[]"}, 400, "invalid_argument",
			"パッチに操作がありません", "patch has no operations"},
		{"no token", http.MethodGet, "/v1/jobs", "", nil, 401, "unauthenticated",
			"Bearer トークンが必要です", "a bearer token is required"},
		{"unknown approver", http.MethodGet, "/v1/jobs", "not-a-known-token-at-all", nil, 403, "unknown_approver",
			"このトークンは承認者のものではありません", "the token does not belong to an approver"},
		{"no route", http.MethodGet, "/v1/nothing", token, nil, 404, "not_found", "この API はありません", "no such route"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sep := "?"
			if strings.Contains(tc.path, "?") {
				sep = "&"
			}
			for _, v := range []struct {
				label, path string
				header      http.Header
				want        string
			}{
				{"default", tc.path, nil, tc.ja},
				{"?locale=ja", tc.path + sep + "locale=ja", http.Header{"Accept-Language": {"en"}}, tc.ja},
				{"?locale=en", tc.path + sep + "locale=en", nil, tc.en},
				{"Accept-Language: en", tc.path, http.Header{"Accept-Language": {"en-US,en;q=0.9,ja;q=0.5"}}, tc.en},
				{"Accept-Language: ja", tc.path, http.Header{"Accept-Language": {"ja-JP"}}, tc.ja},
			} {
				var status int
				var body map[string]any
				if tc.name == "no route" {
					status, body = rawRequest(t, f, tc.method, v.path, tc.auth, v.header)
				} else {
					status, body = f.doWith(t, tc.method, v.path, tc.auth, v.header, tc.body)
				}
				if status != tc.status || body["code"] != tc.code || body["message"] != v.want {
					t.Errorf("%s: %d %v, want %d %s %q", v.label, status, body, tc.status, tc.code, v.want)
				}
			}
		})
	}
}

// rawRequest sends a request to a path the OpenAPI document does not have.
func rawRequest(t *testing.T, f *fixture, method, path, auth string, header http.Header) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, f.srv.URL+path, nil)
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, m
}
