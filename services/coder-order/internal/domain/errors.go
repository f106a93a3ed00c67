// Package domain holds coder-order's types and rules: order names, the proposal contract and
// its validation, and the error classes. It does no I/O.
package domain

import (
	"context"
	"errors"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// Sentinel errors of coder-order.
var (
	// ErrUnknownOrder: the order name is not order1..3 (or coder1..3).
	ErrUnknownOrder = fault.New(fault.Invalid, "unknown order")
	// ErrOrderDisabled: the order is switched off in config.
	ErrOrderDisabled = fault.New(fault.Precondition, "order disabled")
	// ErrOrderUnavailable: the order's client could not be built (e.g. its API key is not set).
	ErrOrderUnavailable = fault.New(fault.Precondition, "order unavailable")
	// ErrInvalidTask: the task text is empty.
	ErrInvalidTask = fault.New(fault.Invalid, "invalid task")
	// ErrCostOverLimit: the prompt alone is estimated above the cost or token limit; the job
	// needs approval to continue instead of a call.
	ErrCostOverLimit = fault.New(fault.Exhausted, "cost over limit")
	// ErrInvalidProposal: the answer did not satisfy the proposal contract even after one
	// repair attempt.
	ErrInvalidProposal = fault.New(fault.Conflict, "invalid proposal")
	// ErrLocalOnly: a cloud order was asked while the session is local_only.
	ErrLocalOnly = llm.ErrLocalOnly
)

// Code is the stable error code of err, as carried in ProposalResult.error_code.
func Code(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrUnknownOrder):
		return "unknown_order"
	case errors.Is(err, ErrOrderDisabled):
		return "order_disabled"
	case errors.Is(err, ErrOrderUnavailable):
		return "order_unavailable"
	case errors.Is(err, ErrInvalidTask):
		return "invalid_task"
	case errors.Is(err, ErrCostOverLimit):
		return "cost_over_limit"
	case errors.Is(err, ErrInvalidProposal):
		return "invalid_proposal"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return llm.Code(err)
}

// FailureTexts are the short texts a failed order shows the user, by its code (Code), in
// Japanese and English.
var FailureTexts = fault.Catalog{
	"unknown_order":     {"不明なオーダーです", "unknown order"},
	"order_disabled":    {"このオーダーは無効化されています", "this order is disabled"},
	"order_unavailable": {"このオーダーは利用できません（APIキー未設定など）", "this order is unavailable (API key not set?)"},
	"invalid_task":      {"依頼内容が空です", "the task is empty"},
	"cost_over_limit":   {"見積もりコストが上限を超えるため呼び出しを止めました。続行するには承認が必要です", "the estimated cost is over the limit, so no call was made; approval is needed to continue"},
	"invalid_proposal":  {"提案の形式が不正でした（1回修正を依頼しましたが直りませんでした）", "the proposal was malformed (one repair was asked for and it was still wrong)"},
	"timeout":           {"時間内に応答がありませんでした", "no answer in time"},
	"unauthenticated":   {"APIキーが拒否されました。キーを確認してください", "the provider rejected the API key; please check it"},
	"rate_limited":      {"プロバイダーのレート制限に達しました。しばらくして再試行してください", "the provider's rate limit was hit; try again later"},
	"unavailable":       {"プロバイダーに接続できませんでした", "the provider could not be reached"},
	"local_only":        {"ローカル専用モードのためクラウドモデルは使えません。/cloud で解除できます", "cloud models are off in local-only mode; use /cloud to lift it"},
	"no_api_key":        {"APIキーが設定されていません", "the API key is not set"},
	"rejected":          {"プロバイダーが依頼を受け付けませんでした", "the provider refused the request"},
	"bad_response":      {"プロバイダーの応答が読めませんでした", "the provider's answer could not be read"},
	"model_unavailable": {"ローカルモデルを使えません。サーバーで `picoclaw models status` を確かめてください", "the local model is unavailable; check `picoclaw models status` on the server"},
	failedOther:         {"失敗しました", "failed"},
}

// failedOther is the text of a failure without a text of its own.
const failedOther = "failed"

// UserMessage is the short text shown to the user for a failed order, in the locale (ja
// default, en). detail is appended as data (it names what was missing, the limit, ...).
func UserMessage(locale, order string, err error) string {
	code := Code(err)
	if _, ok := FailureTexts[code]; !ok {
		code = failedOther
	}
	msg := FailureTexts.Text(locale, code)
	if lme, local := errors.AsType[*llm.LocalModelError](err); local {
		// A local model someone has to fix (its one restart and retry are done): what to run.
		msg = localModelMessage(locale, lme)
	}
	out := order + ": " + msg
	if d := detailOf(err); d != "" {
		out += " (" + d + ")"
	} else if pm := llm.ProviderMessage(err); pm != "" {
		// The provider's own reason (context length exceeded, invalid request, ...) is what
		// the user can act on.
		out += ": " + pm
	}
	return out
}

// DetailError carries a user-safe detail (what was missing, the estimate and the limit).
type DetailError struct {
	Err    error
	Detail string
	// Estimate is set with ErrCostOverLimit: what the call would cost, so a person can be asked
	// whether to continue at that cost.
	Estimate *CostEstimate
}

// CostEstimate is the most a call is expected to cost: its prompt plus a full answer.
type CostEstimate struct {
	Tokens  int64
	CostUSD float64
}

// EstimateOf returns the estimate carried by a cost_over_limit error.
func EstimateOf(err error) (CostEstimate, bool) {
	var de *DetailError
	if errors.As(err, &de) && de.Estimate != nil {
		return *de.Estimate, true
	}
	return CostEstimate{}, false
}

func (e *DetailError) Error() string { return e.Err.Error() + ": " + e.Detail }
func (e *DetailError) Unwrap() error { return e.Err }

// localModelMessage says what to run for a local model that is missing (picoclaw models setup)
// or that Ollama still did not serve after its restart (ollama serve).
func localModelMessage(locale string, e *llm.LocalModelError) string {
	switch {
	case e.Missing && locale == "en":
		return "the local model " + e.Model + " is not installed on Ollama; run `picoclaw models setup` on the server, then ask again"
	case e.Missing:
		return "ローカルモデル " + e.Model + " が Ollama にありません。サーバーで `picoclaw models setup` を実行してから、もう一度依頼してください"
	case locale == "en":
		return "the local model " + e.Model + " is unavailable: Ollama cannot be reached and a restart did not bring it back; start it (ollama serve), check with `picoclaw models status`, then ask again"
	}
	return "ローカルモデル " + e.Model + " を使えません（Ollama に接続できず、再起動しても戻りませんでした）。サーバーで Ollama を起動して（ollama serve）`picoclaw models status` で確かめてから、もう一度依頼してください"
}

func detailOf(err error) string {
	var de *DetailError
	if errors.As(err, &de) {
		return de.Detail
	}
	return ""
}
