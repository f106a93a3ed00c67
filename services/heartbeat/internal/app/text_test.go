package app

import (
	"strings"
	"testing"
	"time"

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
