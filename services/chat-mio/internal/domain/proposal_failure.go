package domain

import (
	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// ProposalFailures say why a coder made no proposal, by the error code coder-order (or the
// router, when it could not reach the coder) gives, in the user's language. A model provider's
// failure is said by its class (llm.FailureTexts, as /status says it); the coder's message and
// the provider's own words go to the log only.
var ProposalFailures = fault.Catalog{
	"unknown_order":     {"不明なオーダーです", "unknown order"},
	"order_disabled":    {"このオーダーは無効になっています", "this order is disabled"},
	"order_unavailable": {"このオーダーは使えません（API キーが未設定など）", "this order is unavailable (API key not set?)"},
	"invalid_task":      {"依頼内容が空です", "the task is empty"},
	"cost_over_limit":   {"見積もりコストが上限を超えるため、呼び出しませんでした", "the estimated cost is over the limit, so no call was made"},
	"invalid_proposal":  {"提案の形式が正しくありませんでした（1 回直してもらいましたが直りませんでした）", "the proposal was malformed (one repair was asked for and it was still wrong)"},
	"unavailable":       {"コーダーかモデルのプロバイダーに接続できませんでした", "the coder or its model provider could not be reached"},
}

// ProposalFailure is a coder's failure of code said in l: the coder's own reason, else the
// class of the model's failure; a code neither knows is a failed model call.
func ProposalFailure(l Locale, code string) string {
	if ProposalFailures.Has(code) {
		return ProposalFailures.Text(string(l), code)
	}
	if c := llm.FailureCode(code); c != "" {
		return llm.FailureTexts.Text(string(l), c)
	}
	return llm.FailureTexts.Text(string(l), llm.FailureOther)
}
