package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
)

// Texts are the REST API's own words in its error bodies, by code: the message beside the
// body's stable code, in the request's language (?locale=, else Accept-Language; ja by default).
// A refusal of the use cases is said by its own catalog (domain.Texts); these cover what the
// API checks itself and what is left when an error has no words for the user.
var Texts = fault.Catalog{
	// Routes and requests.
	TextNoRoute:        {"この API はありません", "no such route"},
	TextMethod:         {"この API ではこのメソッドは使えません", "method not allowed"},
	TextLimit:          {"limit は 1〜%[1]s の整数にしてください", "limit must be 1..%[1]s"},
	TextOffset:         {"offset は 0 以上の整数にしてください", "offset must be a non-negative integer"},
	TextStatus:         {"状態 %[1]s はありません（使えるもの: %[2]s）", "unknown status %[1]s (known: %[2]s)"},
	TextJobID:          {"ジョブ ID %[1]s の形が正しくありません（job_YYYYMMDD_NNN）", "invalid job id %[1]s (expected job_YYYYMMDD_NNN)"},
	TextJobNotFound:    {"ジョブ %[1]s は見つかりません", "job %[1]s not found"},
	TextTTL:            {"ttl %[1]s を期間として読めません（例: 30m, 1h）", "ttl %[1]s is not a duration (e.g. 30m, 1h)"},
	TextBodyNotJSON:    {"リクエストの本文を JSON として読めません", "invalid JSON body"},
	TextBodyField:      {"リクエストの本文に知らないフィールド %[1]s があります", "invalid JSON body: unknown field %[1]s"},
	TextBodyType:       {"リクエストの本文のフィールド %[1]s の型が違います（%[2]s にしてください）", "invalid JSON body: field %[1]s must be %[2]s"},
	TextBodyTooLarge:   {"リクエストの本文が大きすぎます（上限 %[1]s バイト）", "request body too large (at most %[1]s bytes)"},
	TextPatchRequired:  {"patch を指定してください", "patch is required"},
	TextSince:          {"since は RFC 3339 の時刻か、24h のような正の期間にしてください", "since must be an RFC 3339 time or a positive duration such as 24h"},
	TextAuditTampered:  {"監査ログがサービスの外で変更されています。このジョブについては何も決められません（picoclaw audit verify で確認してください）", "the audit log was changed outside the service; nothing is decided on it (picoclaw audit verify shows what was found)"},
	TextGrantLogBroken: {"Auto-Approve の監査ログを検証できないため、変更できません（picoclaw audit verify で確認してください）", "the Auto-Approve audit log does not verify, so it cannot be changed (picoclaw audit verify shows what was found)"},

	// What is left by kind when an error has no words for the user.
	TextInternal:        {"内部エラーが発生しました。時間をおいてもう一度お試しください", "internal error"},
	TextUnavailable:     {"依存するサービスに接続できません。時間をおいてもう一度お試しください", "a dependency is unavailable; retry later"},
	TextInvalid:         {"リクエストが正しくありません", "the request is not valid"},
	TextNotFound:        {"見つかりません", "not found"},
	TextForbidden:       {"この操作は許可されていません", "not allowed"},
	TextUnauthenticated: {"認証できませんでした", "not authenticated"},
	TextConflict:        {"ほかの変更と重なりました。読み直してもう一度お試しください", "another change got there first; read again and retry"},
	TextPrecondition:    {"今の状態ではこの操作はできません", "not possible in the current state"},
	TextExhausted:       {"上限に達しました。しばらくしてからお試しください", "a limit was reached; retry later"},
	TextDataLoss:        {"データの整合性を確認できませんでした", "data failed an integrity check"},
	TextCanceled:        {"リクエストは取り消されました", "the request was cancelled"},
	TextDeadline:        {"時間内に終わりませんでした", "the request ran out of time"},
}

// The codes of Texts (the words; the body's code is the stable one callers match on).
const (
	TextNoRoute        = "NO_ROUTE"
	TextMethod         = "METHOD_NOT_ALLOWED"
	TextLimit          = "LIMIT_RANGE"
	TextOffset         = "OFFSET_INVALID"
	TextStatus         = "STATUS_UNKNOWN"
	TextJobID          = "JOB_ID_INVALID"
	TextJobNotFound    = "JOB_NOT_FOUND"
	TextTTL            = "TTL_UNREADABLE"
	TextBodyNotJSON    = "BODY_NOT_JSON"
	TextBodyField      = "BODY_UNKNOWN_FIELD"
	TextBodyType       = "BODY_FIELD_TYPE"
	TextBodyTooLarge   = "BODY_TOO_LARGE"
	TextPatchRequired  = "PATCH_REQUIRED"
	TextSince          = "SINCE_INVALID"
	TextAuditTampered  = "AUDIT_TAMPERED"
	TextGrantLogBroken = "GRANT_LOG_TAMPERED"

	TextInternal        = "KIND_INTERNAL"
	TextUnavailable     = "KIND_UNAVAILABLE"
	TextInvalid         = "KIND_INVALID"
	TextNotFound        = "KIND_NOT_FOUND"
	TextForbidden       = "KIND_PERMISSION"
	TextUnauthenticated = "KIND_UNAUTHENTICATED"
	TextConflict        = "KIND_CONFLICT"
	TextPrecondition    = "KIND_PRECONDITION"
	TextExhausted       = "KIND_EXHAUSTED"
	TextDataLoss        = "KIND_DATA_LOSS"
	TextCanceled        = "KIND_CANCELED"
	TextDeadline        = "KIND_DEADLINE"
)

// kindTexts are the words left for an error of each kind that has none of its own.
var kindTexts = map[fault.Kind]string{
	fault.Internal: TextInternal, fault.Unavailable: TextUnavailable, fault.Invalid: TextInvalid,
	fault.NotFound: TextNotFound, fault.Permission: TextForbidden, fault.Unauthenticated: TextUnauthenticated,
	fault.Conflict: TextConflict, fault.Precondition: TextPrecondition, fault.Exhausted: TextExhausted,
	fault.DataLoss: TextDataLoss, fault.Canceled: TextCanceled, fault.Deadline: TextDeadline,
}

// Locale is the language a request asks its answers in: ?locale=, else Accept-Language, else ja.
func Locale(r *http.Request) string { return rpcserver.RequestLocale(r) }

// viewLocale is the language a job's texts are shown in: the request's when it names one
// (?locale=, Accept-Language), else "" — the job's own.
func viewLocale(r *http.Request) string {
	if r.URL.Query().Get("locale") == "" && r.Header.Get("Accept-Language") == "" {
		return ""
	}
	return Locale(r)
}

// writeError answers with the body {"code", "message"}: code is stable, message is text (a
// code of Texts with its arguments) in the request's language.
func writeError(w http.ResponseWriter, r *http.Request, status int, code, text string, args ...string) {
	writeJSON(w, status, map[string]string{"code": code, "message": Texts.Text(Locale(r), text, args...)})
}

// bodyError answers a request body that cannot be decoded: an unknown field and a value of the
// wrong type are named, anything else is unreadable JSON.
func bodyError(w http.ResponseWriter, r *http.Request, err error) {
	var typeErr *json.UnmarshalTypeError
	var tooLarge *http.MaxBytesError
	const code = "invalid_argument"
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, r, http.StatusBadRequest, code, TextBodyTooLarge, strconv.FormatInt(tooLarge.Limit, 10))
	case errors.As(err, &typeErr) && typeErr.Field != "":
		writeError(w, r, http.StatusBadRequest, code, TextBodyType, strconv.Quote(typeErr.Field), typeErr.Type.String())
	default:
		// encoding/json names an unknown field only in its message.
		if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			writeError(w, r, http.StatusBadRequest, code, TextBodyField, field)
			return
		}
		writeError(w, r, http.StatusBadRequest, code, TextBodyNotJSON)
	}
}
