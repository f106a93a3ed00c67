package app

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
)

func TestReportText(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	tokyo := time.FixedZone("JST", 9*3600)
	agents := []domain.Agent{
		{Last: domain.Beat{AgentID: "chat", Alias: "Mio", Kind: "agent", MemoryMB: 12.34}, State: domain.StateIdle, LastSeen: now.Add(-3 * time.Second)},
		{Last: domain.Beat{AgentID: "order2", Alias: "Ao", Kind: "agent", JobIDs: []string{"job_20260101_004"}, MemoryMB: 20}, State: domain.StateBusy, LastSeen: now.Add(-time.Second)},
		{Last: domain.Beat{AgentID: "order3", Alias: "Gin", Kind: "agent", ErrorMessage: "anthropic: 529 overloaded"}, State: domain.StateError, LastSeen: now},
		{Last: domain.Beat{AgentID: "executor", Alias: "executor", Kind: "service", JobIDs: []string{"job_20260101_001"}, Note: "サンドボックス: なし", NoteEN: "sandbox: none"}, State: domain.StateTimeout, LastSeen: now.Add(-2 * time.Minute)},
	}
	tests := []struct {
		locale Locale
		want   []string
	}{
		{LocaleJa, []string{
			"稼働状況 2026-01-01 09:00:30（全4件: 待機中 1、処理中 1、エラー 1、応答なし 1）",
			"【エージェント】",
			"・Mio (chat): 待機中 | 最終確認 3秒前 | ジョブ なし | メモリ 12.3MB",
			"・Ao (order2): 処理中 | 最終確認 1秒前 | ジョブ job_20260101_004 | メモリ 20.0MB",
			"・Gin (order3): エラー | 最終確認 0秒前 | ジョブ なし | メモリ 0.0MB | エラー: anthropic: 529 overloaded",
			"【サービス】",
			"・executor: 応答なし | 最終確認 2分前 | ジョブ なし | メモリ 0.0MB | サンドボックス: なし",
		}},
		{LocaleEn, []string{
			"Status at 2026-01-01 09:00:30 (4 total: idle 1, busy 1, error 1, timeout 1)",
			"[Agents]",
			"- Mio (chat): idle | last seen 3s ago | job none | memory 12.3MB",
			"- Ao (order2): busy | last seen 1s ago | job job_20260101_004 | memory 20.0MB",
			"- Gin (order3): error | last seen 0s ago | job none | memory 0.0MB | error: anthropic: 529 overloaded",
			"[Services]",
			"- executor: timeout | last seen 2m ago | job none | memory 0.0MB | sandbox: none",
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.locale), func(t *testing.T) {
			got := ReportText(tt.locale, agents, now, tokyo)
			if want := strings.Join(tt.want, "\n"); got != want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
	// A sender that gives only the Japanese note (an older one) is shown with it in English too.
	old := []domain.Agent{{Last: domain.Beat{AgentID: "executor", Alias: "executor", Kind: "service", Note: "sandbox: none"}, State: domain.StateIdle, LastSeen: now}}
	if got := ReportText(LocaleEn, old, now, tokyo); !strings.Contains(got, "| sandbox: none") {
		t.Errorf("older sender's note: %s", got)
	}
	if got := ReportText(LocaleJa, nil, now, tokyo); !strings.Contains(got, "まだハートビートを受信していません") {
		t.Fatalf("empty report: %s", got)
	}
}

func TestAlertText(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)
	timeoutAgent := domain.Agent{Last: domain.Beat{AgentID: "order1", Alias: "Aka", Kind: "agent"}, State: domain.StateTimeout, LastSeen: now.Add(-time.Minute)}
	errorAgent := domain.Agent{Last: domain.Beat{AgentID: "approval", Alias: "approval", ErrorMessage: "postgres: connection refused"}, State: domain.StateError, LastSeen: now}
	back := domain.Agent{Last: domain.Beat{AgentID: "order1", Alias: "Aka"}, State: domain.StateIdle, LastSeen: now}
	tests := []struct {
		name   string
		locale Locale
		ch     domain.Change
		want   string
	}{
		{"timeout ja", LocaleJa, domain.Change{Agent: timeoutAgent, Previous: domain.StateIdle, Kind: domain.AlertIncident},
			"⚠️ 異常: Aka (order1) から応答がありません（最終確認 09:04:00、1分以上ハートビートなし）。"},
		{"timeout en", LocaleEn, domain.Change{Agent: timeoutAgent, Previous: domain.StateBusy, Kind: domain.AlertIncident},
			"⚠️ Alert: Aka (order1) is not responding (last seen 09:04:00, no heartbeat for over 1m)."},
		{"error ja", LocaleJa, domain.Change{Agent: errorAgent, Previous: domain.StateIdle, Kind: domain.AlertIncident},
			"⚠️ 異常: approval がエラーを報告しました: postgres: connection refused"},
		{"error en", LocaleEn, domain.Change{Agent: errorAgent, Kind: domain.AlertIncident},
			"⚠️ Alert: approval reported an error: postgres: connection refused"},
		{"recovery ja", LocaleJa, domain.Change{Agent: back, Previous: domain.StateTimeout, IncidentSince: now.Add(-3 * time.Minute), Kind: domain.AlertRecovery},
			"✅ 復旧: Aka (order1) が正常に戻りました（待機中、異常の継続 3分）。"},
		{"recovery en", LocaleEn, domain.Change{Agent: back, Previous: domain.StateError, IncidentSince: now.Add(-90 * time.Second), Kind: domain.AlertRecovery},
			"✅ Recovered: Aka (order1) is back (idle; the incident lasted 1m)."},
		{"no alert", LocaleEn, domain.Change{Agent: back, Previous: domain.StateBusy}, ""},
		{"replica left en", LocaleEn, domain.Change{Agent: replicaOf(errorAgent, "pod-2"), IncidentSince: now.Add(-2 * time.Minute), Kind: domain.AlertLeft, ShowReplica: true},
			"ℹ️ Stopped: approval@pod-2 was shut down on purpose; its incident (2m) ends here."},
		{"replica error ja", LocaleJa, domain.Change{Agent: replicaOf(errorAgent, "pod-2"), Kind: domain.AlertIncident, ShowReplica: true},
			"⚠️ 異常: approval@pod-2 がエラーを報告しました: postgres: connection refused"},
		{"only replica error en", LocaleEn, domain.Change{Agent: replicaOf(errorAgent, "pod-2"), Kind: domain.AlertIncident},
			"⚠️ Alert: approval reported an error: postgres: connection refused"},
		{"replaced en", LocaleEn, domain.Change{Agent: replicaOf(errorAgent, "pod-2"), IncidentSince: now.Add(-time.Minute), Kind: domain.AlertReplaced, ReplacedBy: "pod-3", ShowReplica: true},
			"✅ Recovered: approval@pod-2 was replaced by replica pod-3 (the incident lasted 1m)."},
		{"only replica replaced ja", LocaleJa, domain.Change{Agent: replicaOf(errorAgent, "pod-2"), IncidentSince: now.Add(-time.Minute), Kind: domain.AlertReplaced, ReplacedBy: "pod-3"},
			"✅ 復旧: approval が正常に戻りました（異常の継続 1分）。"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AlertText(tt.locale, tt.ch, now, time.Minute, time.FixedZone("JST", 9*3600)); got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func replicaOf(a domain.Agent, replica string) domain.Agent {
	a.Last.Replica = replica
	return a
}

// TestReportSaysProviderErrorsByKind: /status says a model provider's failure by its kind in the
// reader's language, with the sender's short detail — never the provider's words beyond it —
// for every kind a sender reports; other errors and older senders' are shown in their own words,
// masked and bounded.
func TestReportSaysProviderErrorsByKind(t *testing.T) {
	if err := errorTexts.Check(); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	tests := []struct {
		code, detail string
		ja, en       string
	}{
		{llm.FailureUnreachable, "ollama worker-v1:latest",
			"モデルのプロバイダーに接続できません（ollama worker-v1:latest）", "the model provider is unreachable (ollama worker-v1:latest)"},
		{llm.FailureServerError, "anthropic claude-sonnet-4-5 HTTP 500: api_error: internal",
			"モデルのプロバイダーでサーバーエラーが起きています（anthropic claude-sonnet-4-5 HTTP 500: api_error: internal）",
			"the model provider has a server error (anthropic claude-sonnet-4-5 HTTP 500: api_error: internal)"},
		{llm.FailureUnauthenticated, "openai gpt-4o HTTP 401: Incorrect API key provided: sk-***",
			"モデルのプロバイダーで認証に失敗しました。API キーを確認してください（openai gpt-4o HTTP 401: Incorrect API key provided: sk-***）",
			"authentication with the model provider failed; check the API key (openai gpt-4o HTTP 401: Incorrect API key provided: sk-***)"},
		{llm.FailureNoAPIKey, "openai gpt-4o",
			"モデルのプロバイダーの API キーが設定されていません（openai gpt-4o）", "the model provider's API key is not set (openai gpt-4o)"},
		{llm.FailureRateLimited, "anthropic claude-sonnet-4-5 HTTP 529: overloaded_error: Overloaded",
			"モデルのプロバイダーの利用制限に達しました（anthropic claude-sonnet-4-5 HTTP 529: overloaded_error: Overloaded）",
			"the model provider's rate limit was reached (anthropic claude-sonnet-4-5 HTTP 529: overloaded_error: Overloaded)"},
		{llm.FailureModelUnavailable, "ollama worker-v1:latest HTTP 404",
			"モデルが見つからないか、使えません（ollama worker-v1:latest HTTP 404）", "the model is missing or cannot be used (ollama worker-v1:latest HTTP 404)"},
		{llm.FailureTimeout, "deepseek deepseek-chat",
			"モデルが時間内に応答しませんでした（deepseek deepseek-chat）", "the model did not answer in time (deepseek deepseek-chat)"},
		{llm.FailureBadResponse, "openai gpt-4o",
			"モデルのプロバイダーの応答を解釈できませんでした（openai gpt-4o）", "the model provider's answer could not be read (openai gpt-4o)"},
		{llm.FailureRejected, "openai gpt-4o HTTP 400",
			"モデルのプロバイダーが要求を受け付けませんでした（openai gpt-4o HTTP 400）", "the model provider rejected the request (openai gpt-4o HTTP 400)"},
		{llm.FailureLocalOnly, "anthropic claude-sonnet-4-5",
			"ローカル限定のため、クラウドのモデルを呼びませんでした（anthropic claude-sonnet-4-5）", "a cloud model was not called (local only) (anthropic claude-sonnet-4-5)"},
		{llm.FailureCanceled, "",
			"モデルの呼び出しが取り消されました", "the model call was cancelled"},
		{llm.FailureOther, "openai gpt-4o",
			"モデルの呼び出しに失敗しました（openai gpt-4o）", "the model call failed (openai gpt-4o)"},
		// A kind a newer sender knows is still a failed model call.
		{"llm.quota_exhausted", "openai gpt-4o HTTP 402",
			"モデルの呼び出しに失敗しました（openai gpt-4o HTTP 402）", "the model call failed (openai gpt-4o HTTP 402)"},
		// Other failures, and older senders' errors, in their own words: masked and bounded.
		{"", "postgres: connection refused: password=hunter2hunter2",
			"postgres: connection refused: password=***", "postgres: connection refused: password=***"},
		{"", "openai gpt-4o: llm: unauthenticated: HTTP 401: " + strings.Repeat("x", 200),
			"openai gpt-4o: llm: unauthenticated: HTTP 401: " + strings.Repeat("x", 119-len("openai gpt-4o: llm: unauthenticated: HTTP 401: ")) + "…",
			"openai gpt-4o: llm: unauthenticated: HTTP 401: " + strings.Repeat("x", 119-len("openai gpt-4o: llm: unauthenticated: HTTP 401: ")) + "…"},
	}
	listed := map[string]bool{}
	for _, tt := range tests {
		listed[tt.code] = true
		b := domain.Beat{AgentID: "order3", Alias: "Gin", Kind: "agent", ErrorCode: tt.code, ErrorMessage: tt.detail}
		for _, l := range []struct {
			locale Locale
			want   string
			line   string
		}{{LocaleJa, tt.ja, "・Gin (order3): エラー | 最終確認 0秒前 | ジョブ なし | メモリ 0.0MB | エラー: "},
			{LocaleEn, tt.en, "- Gin (order3): error | last seen 0s ago | job none | memory 0.0MB | error: "}} {
			if got := ErrorText(l.locale, b); got != l.want {
				t.Errorf("%s %s:\n got %q\nwant %q", tt.code, l.locale, got, l.want)
			}
			report := ReportText(l.locale, []domain.Agent{{Last: b, State: domain.StateError, LastSeen: now}}, now, time.UTC)
			if !strings.HasSuffix(report, "\n"+l.line+l.want) {
				t.Errorf("%s %s report:\n%s", tt.code, l.locale, report)
			}
		}
		if tt.code != "" && tt.code != "llm.quota_exhausted" {
			if japanese.MatchString(errorTexts[tt.code][1]) {
				t.Errorf("%s: Japanese in the English text", tt.code)
			}
			if w := latinWord.FindString(strings.ReplaceAll(errorTexts[tt.code][0], "API", "")); w != "" {
				t.Errorf("%s: English %q in the Japanese text", tt.code, w)
			}
		}
	}
	errorTexts.ReportUncovered(t.Errorf, func(code string) bool { return listed[code] })
	// The alert pushed to the admin says it the same way.
	ch := domain.Change{Agent: domain.Agent{Last: domain.Beat{AgentID: "worker", Alias: "Shiro", ErrorCode: llm.FailureRateLimited,
		ErrorMessage: "openai gpt-4o HTTP 429"}, State: domain.StateError, LastSeen: now}, Previous: domain.StateIdle, Kind: domain.AlertIncident}
	if got := AlertText(LocaleJa, ch, now, time.Minute, time.UTC); got != "⚠️ 異常: Shiro (worker) がエラーを報告しました: モデルのプロバイダーの利用制限に達しました（openai gpt-4o HTTP 429）" {
		t.Errorf("alert ja: %q", got)
	}
	if got := AlertText(LocaleEn, ch, now, time.Minute, time.UTC); got != "⚠️ Alert: Shiro (worker) reported an error: the model provider's rate limit was reached (openai gpt-4o HTTP 429)" {
		t.Errorf("alert en: %q", got)
	}
}

var (
	japanese  = regexp.MustCompile(`[\p{Hiragana}\p{Katakana}\p{Han}]`)
	latinWord = regexp.MustCompile(`[A-Za-z]{2,}`)
)
