package domain

import (
	"fmt"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
)

// Locale of the user-facing text: ja (default) or en.
type Locale string

// Locales.
const (
	JA Locale = "ja"
	EN Locale = "en"
)

// ParseLocale returns en for "en…", ja for "ja…", and def otherwise.
func ParseLocale(s string, def Locale) Locale {
	switch l := strings.ToLower(strings.TrimSpace(s)); {
	case strings.HasPrefix(l, "en"):
		return EN
	case strings.HasPrefix(l, "ja"):
		return JA
	}
	if def == EN {
		return EN
	}
	return JA
}

// MsgKey names a user-facing text.
type MsgKey string

// Message keys.
const (
	MsgHelp                MsgKey = "help"
	MsgUsageApprove        MsgKey = "usage_approve"
	MsgUsageDeny           MsgKey = "usage_deny"
	MsgUsagePick           MsgKey = "usage_pick"
	MsgUsageRetry          MsgKey = "usage_retry"
	MsgRetrying            MsgKey = "retrying"
	MsgRetryUnknown        MsgKey = "retry_unknown"
	MsgUsageAuto           MsgKey = "usage_auto"
	MsgUsageNoArgs         MsgKey = "usage_noargs"
	MsgUsageUnknown        MsgKey = "usage_unknown"
	MsgEmpty               MsgKey = "empty"
	MsgStoreDown           MsgKey = "store_down"
	MsgLocalOn             MsgKey = "local_on"
	MsgLocalOff            MsgKey = "local_off"
	MsgLocalRefusal        MsgKey = "local_refusal"
	MsgSettingNotSaved     MsgKey = "setting_not_saved"
	MsgRouterDown          MsgKey = "router_down"
	MsgChatModelDown       MsgKey = "chat_model_down"
	MsgLocalModelMissing   MsgKey = "local_model_missing"
	MsgLocalModelDown      MsgKey = "local_model_down"
	MsgWorkerResultPlain   MsgKey = "worker_result_plain"
	MsgWorkerNoResult      MsgKey = "worker_no_result"
	MsgApprovalDown        MsgKey = "approval_down"
	MsgApprovalRefused     MsgKey = "approval_refused"
	MsgDecisionDown        MsgKey = "decision_down"
	MsgDecisionFailed      MsgKey = "decision_failed"
	MsgApprovalRejected    MsgKey = "approval_rejected"
	MsgApprovalFailed      MsgKey = "approval_failed"
	MsgAutoDown            MsgKey = "auto_down"
	MsgAutoRefused         MsgKey = "auto_refused"
	MsgApprovalRequest     MsgKey = "approval_request"
	MsgAutoApproved        MsgKey = "auto_approved"
	MsgExecuted            MsgKey = "executed"
	MsgExecFailed          MsgKey = "exec_failed"
	MsgExecutorDown        MsgKey = "executor_down"
	MsgExecAsync           MsgKey = "exec_async"
	MsgNotApprover         MsgKey = "not_approver"
	MsgNotApproverAuto     MsgKey = "not_approver_auto"
	MsgJobNotFound         MsgKey = "job_not_found"
	MsgJobConflict         MsgKey = "job_conflict"
	MsgDecisionRefused     MsgKey = "decision_refused"
	MsgApproved            MsgKey = "approved"
	MsgDenied              MsgKey = "denied"
	MsgDeniedReason        MsgKey = "denied_reason"
	MsgAutoOn              MsgKey = "auto_on"
	MsgAutoOff             MsgKey = "auto_off"
	MsgAutoStatusOff       MsgKey = "auto_status_off"
	MsgAutoDegraded        MsgKey = "auto_degraded"
	MsgPeerFailed          MsgKey = "peer_failed"
	MsgPickNotFound        MsgKey = "pick_not_found"
	MsgDeliberation        MsgKey = "deliberation"
	MsgProposalFailed      MsgKey = "proposal_failed"
	MsgNoProposal          MsgKey = "no_proposal"
	MsgAnswer              MsgKey = "answer"
	MsgProposalStale       MsgKey = "proposal_stale"
	MsgStatusSession       MsgKey = "status_session"
	MsgHeartbeatDown       MsgKey = "heartbeat_down"
	MsgDeclareWorker       MsgKey = "declare_worker"
	MsgDeclareOrder        MsgKey = "declare_order"
	MsgDeclareCoder        MsgKey = "declare_coder"
	MsgDeclareDeliberation MsgKey = "declare_deliberation"
	MsgQuestions           MsgKey = "questions"
	MsgButtonApprove       MsgKey = "button_approve"
	MsgButtonDeny          MsgKey = "button_deny"
	MsgButtonSimilar       MsgKey = "button_similar"
	MsgButtonPick          MsgKey = "button_pick"
	MsgInternal            MsgKey = "internal"
	MsgYes                 MsgKey = "yes"
	MsgNo                  MsgKey = "no"
	MsgNone                MsgKey = "none"
	MsgForgot              MsgKey = "forgot"
	MsgSummaryPrompt       MsgKey = "summary_prompt"
	MsgButtonContinue      MsgKey = "button_continue"
	MsgButtonStop          MsgKey = "button_stop"
	MsgCostContinuing      MsgKey = "cost_continuing"
	MsgCostRequestGone     MsgKey = "cost_request_gone"
	MsgCostOtherChat       MsgKey = "cost_other_chat"
	MsgVisionNotConfigured MsgKey = "vision_not_configured"
	MsgVisionLocalOnly     MsgKey = "vision_local_only"
	MsgImageBadType        MsgKey = "image_bad_type"
	MsgImageAuditDown      MsgKey = "image_audit_down"
	MsgVisionModelDown     MsgKey = "vision_model_down"
	MsgImagePrompt         MsgKey = "image_prompt"
)

var catalog = map[MsgKey][2]string{
	MsgButtonContinue: {"続行", "Continue"},
	MsgButtonStop:     {"中止", "Stop"},
	MsgCostContinuing: {"%s の続行が承認されました。%s に約 $%.2f までで依頼します（新しいジョブ %s）。",
		"Continuing %s was approved: asking %s at up to about $%.2f (new job %s)."},
	MsgCostRequestGone: {"%s の続行は承認されましたが、元の依頼がもう残っていません。もう一度送ってください。",
		"Continuing %s was approved, but the original request is no longer kept. Please send it again."},
	MsgCostOtherChat: {"%s の続行は承認されましたが、依頼は別の会話のものなので、ここでは実行しません。",
		"Continuing %s was approved, but the request belongs to another conversation, so it is not run here."},
	MsgSummaryPrompt: {"次はユーザーとアシスタントの一日分の会話です。翌日の会話で役立つように、事実・決めたこと・未解決のことを日本語で%d文字以内のメモにまとめてください。" +
		"パスワードやトークンなどの秘密情報は書かないでください。メモだけを答えてください。",
		"Below is one day of conversation between the user and the assistant. Summarise it as a note of at most %d characters " +
			"for the next day: facts, decisions and open questions. Never include secrets such as passwords or tokens. Answer with the note only."},
	MsgForgot: {"この会話の記憶（今日の会話と前日のまとめ）を消しました。",
		"I have forgotten this conversation (today's messages and the note kept from yesterday)."},
	MsgHelp: {
		"Mio です。使えるコマンド:\n" +
			"/approve <job_id> — 承認して実行\n" +
			"/deny <job_id> [理由] — 却下\n" +
			"/auto-approve on [ttl=30m] [paths=docs/,README.md] [tasks=docs,review] [routes=CODE1] [ops=shell] | off | status\n" +
			"/pick <job_id> <番号> — 合議の候補を選ぶ\n" +
			"/retry <job_id> — 同じオーダーに今のワークスペースで依頼し直す\n" +
			"/status — 各サービスの状態\n" +
			"/local — クラウドのモデルを使わない / /cloud — 使う\n" +
			"/forget — 今日の会話の記憶と前日のまとめを消す\n" +
			"/chat /plan /analyze /ops /research /code /code1 /code2 /code3 /deliberate — ルートを指定\n" +
			"/help — このヘルプ",
		"I'm Mio. Commands:\n" +
			"/approve <job_id> — approve and run\n" +
			"/deny <job_id> [reason] — deny\n" +
			"/auto-approve on [ttl=30m] [paths=docs/,README.md] [tasks=docs,review] [routes=CODE1] [ops=shell] | off | status\n" +
			"/pick <job_id> <n> — pick a deliberation option\n" +
			"/retry <job_id> — ask the same order again with the workspace as it is now\n" +
			"/status — state of every service\n" +
			"/local — no cloud models / /cloud — allow them\n" +
			"/forget — forget today's conversation and the note kept from yesterday\n" +
			"/chat /plan /analyze /ops /research /code /code1 /code2 /code3 /deliberate — choose the route\n" +
			"/help — this help",
	},
	MsgUsageApprove: {"使い方: /approve <job_id> [similar 30m]（similar: 同種のジョブもその時間だけ自動承認。例: /approve job_20260101_001）",
		"Usage: /approve <job_id> [similar 30m] (similar: also approve similar jobs for that long; e.g. /approve job_20260101_001)"},
	MsgUsageDeny:  {"使い方: /deny <job_id> [理由]", "Usage: /deny <job_id> [reason]"},
	MsgUsageRetry: {"使い方: /retry <job_id>（例: /retry job_20260101_001）", "Usage: /retry <job_id> (e.g. /retry job_20260101_001)"},
	MsgRetrying: {"ジョブ %s を %s にもう一度依頼します（今のワークスペースで。新しいジョブ %s）。",
		"Asking %[2]s again for job %[1]s, with the workspace as it is now (new job %[3]s)."},
	MsgRetryUnknown: {"ジョブ %s の依頼は見つかりません（/retry はこの会話のコーダーへの依頼に、24 時間以内に使えます）。もう一度依頼してください。",
		"The request of job %s is not known here (/retry works for coder requests of this conversation, within 24 hours). Please ask again."},
	MsgUsagePick: {"使い方: /pick <job_id> <番号>（番号は 1〜9）", "Usage: /pick <job_id> <n> (n is 1-9)"},
	MsgUsageAuto: {"使い方: /auto-approve on [ttl=30m] [paths=docs/,README.md] [tasks=docs,review] [routes=CODE1] [ops=shell] | off | status",
		"Usage: /auto-approve on [ttl=30m] [paths=docs/,README.md] [tasks=docs,review] [routes=CODE1] [ops=shell] | off | status"},
	MsgUsageNoArgs:  {"使い方: %s（引数はありません）", "Usage: %s (no arguments)"},
	MsgEmpty:        {"メッセージが空でした。文章で送ってください（/help でコマンドを確認できます）。", "The message was empty. Please send text (/help lists the commands)."},
	MsgUsageUnknown: {"知らないコマンドです。/help で使えるコマンドを確認できます。", "Unknown command. Send /help to see the commands."},
	MsgStoreDown: {"⚠️ セッションの保存先（Redis）に接続できないため、新しいセッションとして扱っています。Auto-Approve は無効です。",
		"⚠️ The session store (Redis) is unreachable, so this is treated as a new session. Auto-Approve is off."},
	MsgLocalOn: {"ローカル限定モードにしました。クラウドのモデルは使いません（CODE ルートも止まります）。解除は /cloud です。",
		"Local-only mode is on: no cloud model will be used (CODE routes stop too). Send /cloud to lift it."},
	MsgLocalOff: {"ローカル限定モードを解除しました。CODE ルートではクラウドのモデルを使います。",
		"Local-only mode is off: CODE routes may use cloud models again."},
	MsgLocalRefusal: {"ローカル限定モードなので、クラウドのモデルを使う CODE ルートは実行しません。使うには /cloud を送ってから、もう一度依頼してください。",
		"Local-only mode is on, so the CODE route (cloud models) is refused. Send /cloud, then ask again."},
	MsgSettingNotSaved: {"設定を保存できませんでした（Redis に接続できません）。少し待ってからもう一度送ってください。",
		"The setting could not be saved (Redis is unreachable). Please try again shortly."},
	MsgRouterDown: {"振り分け担当（router-shiro）に接続できませんでした。少し待ってからもう一度送ってください。",
		"The router (router-shiro) could not be reached. Please try again shortly."},
	MsgVisionNotConfigured: {"画像を読むには画像対応（vision）モデルの設定が必要です。設定ファイルの models.vision に、例えば Ollama の qwen2.5vl や llava を指定してください。今は文章で送ってください。",
		"Reading images needs a vision model: set models.vision in the configuration (for example Ollama's qwen2.5vl or llava). For now, please send text."},
	MsgVisionLocalOnly: {"ローカル限定モードなので、画像をクラウドの画像モデル（%s）には送りません。送ってよい場合は /cloud を送ってから、もう一度画像を送ってください。",
		"Local-only mode is on, so the image is not sent to the cloud vision model (%s). Send /cloud, then the image again, if that is fine."},
	MsgImageBadType: {"この画像の形式（%s）は読めません。JPEG・PNG・GIF・WebP で送ってください。",
		"This image type (%s) cannot be read. Please send JPEG, PNG, GIF or WebP."},
	MsgImageAuditDown: {"画像の記録（監査ログ）を書けなかったため、画像はモデルに送っていません。少し待ってからもう一度送ってください。",
		"The image could not be recorded in the audit log, so it was not sent to any model. Please try again shortly."},
	MsgVisionModelDown: {"画像モデル（%s）が応答しませんでした。少し待ってからもう一度送ってください。",
		"The vision model (%s) did not answer. Please try again shortly."},
	MsgImagePrompt: {"この画像について日本語で説明してください。", "Please describe this image."},
	MsgChatModelDown: {"会話モデル（%s）が応答しませんでした。少し待ってからもう一度送ってください。",
		"The chat model (%s) did not answer. Please try again shortly."},
	MsgLocalModelMissing: {"%sのローカルモデル %s が Ollama にありません。サーバーで `picoclaw models setup` を実行してから、もう一度送ってください。",
		"The local model of %s (%s) is not installed on Ollama. Run `picoclaw models setup` on the server, then send your message again."},
	MsgLocalModelDown: {"%sのローカルモデル %s を使えません（Ollama に接続できず、再起動しても戻りませんでした）。サーバーで Ollama を起動して（ollama serve）`picoclaw models status` で確かめてから、もう一度送ってください。",
		"The local model of %s (%s) is unavailable: Ollama cannot be reached and a restart did not bring it back. Start Ollama on the server (ollama serve), check with `picoclaw models status`, then send your message again."},
	MsgWorkerNoResult: {"Shiro（作業モデル）から使える結果が返りませんでした。もう一度送るか、言い方を変えて依頼してください。",
		"Shiro (the worker model) returned no usable result. Please send it again or rephrase the request."},
	MsgWorkerResultPlain: {"（会話モデルが応答しないため、Shiro の結果をそのまま表示します）", "(The chat model did not answer; here is Shiro's result as is.)"},
	MsgApprovalDown: {"承認サービスに接続できないため、ジョブ %s の提案は実行していません。承認サービスが戻ったら、もう一度依頼してください。",
		"The approval service is unreachable, so the proposal of job %s was not executed. Please ask again once it is back."},
	MsgDecisionDown: {"承認サービスに接続できないため、ジョブ %[1]s は決定も実行もされていません。少し待ってから %[2]s %[1]s をもう一度送ってください。",
		"The approval service is unreachable, so job %[1]s was neither decided nor run. Please send %[2]s %[1]s again shortly."},
	MsgDecisionFailed: {"承認サービスでエラーが起きたため、ジョブ %[1]s は決定も実行もされていません。少し待ってから %[2]s %[1]s をもう一度送ってください。",
		"The approval service reported an error, so job %[1]s was neither decided nor run. Please send %[2]s %[1]s again shortly."},
	MsgApprovalRejected: {"承認サービスがジョブ %s の提案を受け付けなかったため、実行していません: %s",
		"The approval service did not accept the proposal of job %s, so it was not executed: %s"},
	MsgApprovalFailed: {"承認サービスでエラーが起きたため、ジョブ %s の提案は実行していません。少し待ってから、もう一度依頼してください。",
		"The approval service reported an error, so the proposal of job %s was not executed. Please ask again shortly."},
	MsgAutoDown: {"承認サービスに接続できないため、Auto-Approve の状態を確認・変更できませんでした。少し待ってからもう一度送ってください。",
		"The approval service is unreachable, so Auto-Approve could not be read or changed. Please try again shortly."},
	MsgAutoRefused:     {"Auto-Approve は変更できませんでした: %s", "Auto-Approve could not be changed: %s"},
	MsgApprovalRefused: {"ジョブ %s はポリシーにより拒否されました（実行しません）。\n理由: %s", "Job %s was refused by policy (it will not run).\nReason: %s"},
	MsgApprovalRequest: {"ジョブ %s は承認待ちです。\n%s\n\n/approve %s で承認、/deny %s [理由] で却下できます。",
		"Job %s is waiting for approval.\n%s\n\nSend /approve %s to approve or /deny %s [reason] to deny."},
	MsgAutoApproved: {"ジョブ %s は Auto-Approve の範囲内なので、確認なしで実行しました。", "Job %s is within the Auto-Approve scope and ran without asking."},
	MsgExecuted:     {"ジョブ %s の実行結果:\n%s", "Result of job %s:\n%s"},
	MsgExecFailed:   {"ジョブ %s の実行に失敗しました: %s", "Job %s failed to run: %s"},
	MsgExecutorDown: {"実行サービス（executor）に接続できなかったため、ジョブ %s はまだ実行されていません。少し待ってから状態を確認してください。",
		"The executor could not be reached, so job %s has not run. Please check its state again shortly."},
	MsgExecAsync:       {"ジョブ %s を実行しています。終わったら結果をお知らせします。", "Job %s is running. I'll send the result when it finishes."},
	MsgNotApprover:     {"ジョブ %s を決定する権限がありません（承認者として登録されていません）。", "You may not decide job %s (you are not a registered approver)."},
	MsgNotApproverAuto: {"Auto-Approve を変更する権限がありません（承認者として登録されていません）。", "You may not change Auto-Approve (you are not a registered approver)."},
	MsgJobNotFound:     {"ジョブ %s は見つかりませんでした。job_id を確認してください。", "Job %s was not found. Please check the job id."},
	MsgJobConflict:     {"ジョブ %s はすでに決定済みか、期限切れです（%s）。", "Job %s was already decided or has expired (%s)."},
	MsgDecisionRefused: {"ジョブ %s は決定できませんでした: %s", "Job %s could not be decided: %s"},
	MsgApproved:        {"ジョブ %s を承認しました。", "Job %s approved."},
	MsgDenied:          {"ジョブ %s を却下しました。", "Job %s denied."},
	MsgDeniedReason:    {"ジョブ %s を却下しました。理由: %s", "Job %s denied. Reason: %s"},
	MsgAutoOn:          {"Auto-Approve を有効にしました。", "Auto-Approve is on."},
	MsgAutoOff:         {"Auto-Approve を無効にしました。", "Auto-Approve is off."},
	MsgAutoStatusOff:   {"Auto-Approve は無効です。", "Auto-Approve is off."},
	MsgAutoDegraded:    {"セッションの保存先（Redis）に接続できないため、Auto-Approve は有効にできません。", "The session store (Redis) is unreachable, so Auto-Approve cannot be turned on."},
	MsgPeerFailed:      {"%s でエラーが起きました。少し待ってからもう一度送ってください。", "%s reported an error. Please try again shortly."},
	MsgPickNotFound:    {"ジョブ %s の候補 %d は見つかりませんでした。", "Option %[2]d of job %[1]s was not found."},
	MsgDeliberation:    {"ジョブ %s の候補です。/pick %s <番号> で選んでください。", "Options for job %s. Pick one with /pick %s <n>."},
	MsgProposalFailed:  {"%s: 提案できませんでした（%s）", "%s: no proposal (%s)"},
	MsgAnswer:          {"%s の回答（ジョブ %s、変更なし）:\n%s", "Answer from %s (job %s, no changes):\n%s"},
	MsgProposalStale: {"ジョブ %[1]s の提案は今のワークスペースに適用できません。承認は求めず、何も変更していません。/retry %[1]s で今の内容をもとに依頼し直せます。\n%[2]s",
		"The proposal of job %[1]s no longer applies to the workspace, so no approval was asked and nothing was changed. Send /retry %[1]s to ask again with the current content.\n%[2]s"},
	MsgNoProposal:          {"提案を作れませんでした（%s）。内容を変えてもう一度依頼してください。", "No proposal could be made (%s). Please rephrase and ask again."},
	MsgStatusSession:       {"セッション %s: ローカル限定 %s / 承認待ち %s", "Session %s: local-only %s / pending %s"},
	MsgHeartbeatDown:       {"状態監視（heartbeat）に接続できませんでした。", "The heartbeat service could not be reached."},
	MsgDeclareWorker:       {"【Shiro が %s として担当します】", "[Shiro handles this as %s]"},
	MsgDeclareOrder:        {"【%s（%s）が提案を担当します】", "[%s (%s) is writing the proposal]"},
	MsgDeclareCoder:        {"【コーダーが提案を担当します】", "[A coder is writing the proposal]"},
	MsgDeclareDeliberation: {"【合議: 複数のコーダーが提案しました】", "[Deliberation: several coders proposed]"},
	MsgQuestions:           {"確認させてください:", "Please tell me:"},
	MsgButtonApprove:       {"承認", "Approve"},
	MsgButtonDeny:          {"却下", "Deny"},
	MsgButtonSimilar:       {"承認+同種30分", "Approve+similar 30m"},
	MsgButtonPick:          {"候補 %d を選ぶ", "Pick %d"},
	MsgInternal:            {"内部エラーが起きました（%s）。もう一度送ってください。", "An internal error occurred (%s). Please try again."},
	MsgYes:                 {"オン", "on"},
	MsgNo:                  {"オフ", "off"},
	MsgNone:                {"なし", "none"},
}

// T returns the text for key in locale, formatted with args.
func T(l Locale, key MsgKey, args ...any) string {
	pair, ok := catalog[key]
	if !ok {
		return string(key)
	}
	s := pair[0]
	if l == EN {
		s = pair[1]
	}
	if len(args) == 0 {
		return s
	}
	return fmt.Sprintf(s, args...)
}

// UsageFor returns the usage text for a command name as typed ("" = unknown command).
func UsageFor(l Locale, name string) string {
	switch name {
	case "/approve":
		return T(l, MsgUsageApprove)
	case "/deny":
		return T(l, MsgUsageDeny)
	case "/pick":
		return T(l, MsgUsagePick)
	case "/retry":
		return T(l, MsgUsageRetry)
	case "/auto-approve":
		return T(l, MsgUsageAuto)
	case "/status", "/local", "/cloud", "/help":
		return T(l, MsgUsageNoArgs, name)
	}
	return T(l, MsgUsageUnknown)
}

// LocalModelUnavailable is the message for a local model that someone has to fix: missing
// (run picoclaw models setup) or down after a restart. worker says whose model it is: Shiro's
// (the worker) or Mio's (the chat model).
func LocalModelUnavailable(l Locale, worker bool, model string, missing bool) string {
	who := map[bool]string{false: "Mio（会話）", true: "Shiro（作業）"}[worker]
	if l == EN {
		who = map[bool]string{false: "Mio (chat)", true: "Shiro (worker)"}[worker]
	}
	return localModelUnavailable(l, who, model, missing)
}

// VisionModelUnavailable is LocalModelUnavailable for the vision model (models.vision).
func VisionModelUnavailable(l Locale, model string, missing bool) string {
	if l == EN {
		return localModelUnavailable(l, "Mio (images)", model, missing)
	}
	return localModelUnavailable(l, "Mio（画像）", model, missing)
}

func localModelUnavailable(l Locale, who, model string, missing bool) string {
	if missing {
		return T(l, MsgLocalModelMissing, who, model)
	}
	return T(l, MsgLocalModelDown, who, model)
}

// StateWord is a job's state (as approval names it: "pending", "granted", …) said in l, in the
// words every service uses (fault.States); a state it does not know is shown as it is.
func StateWord(l Locale, state string) string { return fault.StateText(string(l), state) }
