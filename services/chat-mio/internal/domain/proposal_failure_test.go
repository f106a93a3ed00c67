package domain

import "testing"

func TestProposalFailures(t *testing.T) {
	if err := ProposalFailures.Check(); err != nil {
		t.Fatal(err)
	}
	if err := ProposalFailures.CheckLanguages("API"); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ code, ja, en string }{
		{"unknown_order", "不明なオーダーです", "unknown order"},
		{"order_disabled", "このオーダーは無効になっています", "this order is disabled"},
		{"order_unavailable", "このオーダーは使えません（API キーが未設定など）", "this order is unavailable (API key not set?)"},
		{"invalid_task", "依頼内容が空です", "the task is empty"},
		{"cost_over_limit", "見積もりコストが上限を超えるため、呼び出しませんでした", "the estimated cost is over the limit, so no call was made"},
		{"invalid_proposal", "提案の形式が正しくありませんでした（1 回直してもらいましたが直りませんでした）", "the proposal was malformed (one repair was asked for and it was still wrong)"},
		{"unavailable", "コーダーかモデルのプロバイダーに接続できませんでした", "the coder or its model provider could not be reached"},
		// A model's failure by its class, as /status says it.
		{"rate_limited", "モデルのプロバイダーの利用制限に達しました", "the model provider's rate limit was reached"},
		{"unauthenticated", "モデルのプロバイダーで認証に失敗しました。API キーを確認してください", "authentication with the model provider failed; check the API key"},
		{"timeout", "モデルが時間内に応答しませんでした", "the model did not answer in time"},
		{"local_only", "ローカル限定のため、クラウドのモデルを呼びませんでした", "a cloud model was not called (local only)"},
		{"error", "モデルの呼び出しに失敗しました", "the model call failed"},
		// A code neither knows (a newer coder's).
		{"quota_gone", "モデルの呼び出しに失敗しました", "the model call failed"},
		{"", "モデルの呼び出しに失敗しました", "the model call failed"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.code] = true
		if got := ProposalFailure(JA, tt.code); got != tt.ja {
			t.Errorf("%q ja: %q, want %q", tt.code, got, tt.ja)
		}
		if got := ProposalFailure(EN, tt.code); got != tt.en {
			t.Errorf("%q en: %q, want %q", tt.code, got, tt.en)
		}
	}
	ProposalFailures.ReportUncovered(t.Errorf, func(code string) bool { return seen[code] })
}
