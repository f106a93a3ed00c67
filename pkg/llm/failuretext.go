package llm

import "github.com/picoclaw-suite/picoclaw/pkg/fault"

// FailureTexts say what kind of failure a call to a model was, by the codes of a Failure, in
// Japanese and in English: a provider's failure by its class, never in the provider's own words.
// The status report (/status) says an agent's last failure with them, chat a coder's.
var FailureTexts = fault.Catalog{
	FailureUnreachable:      {"モデルのプロバイダーに接続できません", "the model provider is unreachable"},
	FailureServerError:      {"モデルのプロバイダーでサーバーエラーが起きています", "the model provider has a server error"},
	FailureUnauthenticated:  {"モデルのプロバイダーで認証に失敗しました。API キーを確認してください", "authentication with the model provider failed; check the API key"},
	FailureNoAPIKey:         {"モデルのプロバイダーの API キーが設定されていません", "the model provider's API key is not set"},
	FailureRateLimited:      {"モデルのプロバイダーの利用制限に達しました", "the model provider's rate limit was reached"},
	FailureModelUnavailable: {"モデルが見つからないか、使えません", "the model is missing or cannot be used"},
	FailureTimeout:          {"モデルが時間内に応答しませんでした", "the model did not answer in time"},
	FailureBadResponse:      {"モデルのプロバイダーの応答を解釈できませんでした", "the model provider's answer could not be read"},
	FailureRejected:         {"モデルのプロバイダーが要求を受け付けませんでした", "the model provider rejected the request"},
	FailureLocalOnly:        {"ローカル限定のため、クラウドのモデルを呼びませんでした", "a cloud model was not called (local only)"},
	FailureCanceled:         {"モデルの呼び出しが取り消されました", "the model call was cancelled"},
	FailureOther:            {"モデルの呼び出しに失敗しました", "the model call failed"},
}

// FailureCode is the Failure code of Code's short code ("rate_limited" → "llm.rate_limited",
// "error" → "llm.error"), or "" when code is not one of Code's. A short "unavailable" is the
// provider's server error, as FailureOf says it of a provider that was reached.
func FailureCode(code string) string {
	if code == "unavailable" {
		return FailureServerError
	}
	if code != "" && FailureTexts.Has("llm."+code) {
		return "llm." + code
	}
	return ""
}
