package app

import (
	"fmt"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/redact"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
)

// Locale is ja (default) or en.
type Locale string

// Locales of user-facing text.
const (
	LocaleJa Locale = "ja"
	LocaleEn Locale = "en"
)

// ParseLocale returns en for "en" (any case) and ja otherwise.
func ParseLocale(s string) Locale {
	if strings.EqualFold(strings.TrimSpace(s), "en") {
		return LocaleEn
	}
	return LocaleJa
}

func stateText(l Locale, s domain.State) string {
	if l == LocaleEn {
		return string(s)
	}
	switch s {
	case domain.StateIdle:
		return "待機中"
	case domain.StateBusy:
		return "処理中"
	case domain.StateError:
		return "エラー"
	case domain.StateTimeout:
		return "応答なし"
	}
	return string(s)
}

// label names the agent, and with replica its replica: "Mio (chat@chat-mio-2)".
func label(a domain.Agent, replica bool) string {
	id := a.Last.AgentID
	if replica {
		id = a.Last.Key()
	}
	if a.Last.Alias == "" || a.Last.Alias == a.Last.AgentID {
		return id
	}
	return fmt.Sprintf("%s (%s)", a.Last.Alias, id)
}

// ago renders a duration as "3秒前" / "3s ago", rounded down to the largest unit.
func ago(l Locale, d time.Duration) string {
	if d < 0 {
		d = 0
	}
	var n int64
	var ja, en string
	switch {
	case d < time.Minute:
		n, ja, en = int64(d/time.Second), "秒前", "s ago"
	case d < time.Hour:
		n, ja, en = int64(d/time.Minute), "分前", "m ago"
	case d < 48*time.Hour:
		n, ja, en = int64(d/time.Hour), "時間前", "h ago"
	default:
		n, ja, en = int64(d/(24*time.Hour)), "日前", "d ago"
	}
	if l == LocaleEn {
		return fmt.Sprintf("%d%s", n, en)
	}
	return fmt.Sprintf("%d%s", n, ja)
}

func span(l Locale, d time.Duration) string {
	if l == LocaleEn {
		return strings.TrimSuffix(ago(l, d), " ago")
	}
	return strings.TrimSuffix(ago(l, d), "前")
}

// ReportText is the text of /status: each agent with alias, status, last seen, current job and
// memory; the five agents first, then the services.
func ReportText(l Locale, agents []domain.Agent, now time.Time, loc *time.Location) string {
	var b strings.Builder
	counts := map[domain.State]int{}
	for _, a := range agents {
		counts[a.State]++
	}
	var summary []string
	for _, s := range []domain.State{domain.StateIdle, domain.StateBusy, domain.StateError, domain.StateTimeout} {
		if counts[s] > 0 {
			summary = append(summary, fmt.Sprintf("%s %d", stateText(l, s), counts[s]))
		}
	}
	stamp := now.In(loc).Format("2006-01-02 15:04:05")
	if l == LocaleEn {
		fmt.Fprintf(&b, "Status at %s (%d total: %s)\n", stamp, len(agents), strings.Join(summary, ", "))
	} else {
		fmt.Fprintf(&b, "稼働状況 %s（全%d件: %s）\n", stamp, len(agents), strings.Join(summary, "、"))
	}
	if len(agents) == 0 {
		if l == LocaleEn {
			b.WriteString("No heartbeat received yet.")
		} else {
			b.WriteString("まだハートビートを受信していません。")
		}
		return b.String()
	}
	var hosted, services []domain.Agent
	for _, a := range agents {
		if a.Last.Kind == "agent" {
			hosted = append(hosted, a)
		} else {
			services = append(services, a)
		}
	}
	// An agent that runs as several replicas shows each with its replica id.
	entries := map[string]int{}
	for _, a := range agents {
		entries[a.Last.AgentID]++
	}
	section := func(title string, list []domain.Agent) {
		if len(list) == 0 {
			return
		}
		b.WriteString(title + "\n")
		for _, a := range list {
			b.WriteString(reportLine(l, a, now, entries[a.Last.AgentID] > 1) + "\n")
		}
	}
	if l == LocaleEn {
		section("[Agents]", hosted)
		section("[Services]", services)
	} else {
		section("【エージェント】", hosted)
		section("【サービス】", services)
	}
	return strings.TrimRight(b.String(), "\n")
}

func reportLine(l Locale, a domain.Agent, now time.Time, replica bool) string {
	job := a.Last.CurrentJobID()
	if extra := len(a.Last.JobIDs) - 1; extra > 0 {
		job = fmt.Sprintf("%s +%d", job, extra)
	}
	none, format, errorLabel := "なし", "・%s: %s | 最終確認 %s | ジョブ %s | メモリ %.1fMB", " | エラー: "
	if l == LocaleEn {
		none, format, errorLabel = "none", "- %s: %s | last seen %s | job %s | memory %.1fMB", " | error: "
	}
	if job == "" || a.State == domain.StateTimeout {
		job = none
	}
	line := fmt.Sprintf(format, label(a, replica), stateText(l, a.State), ago(l, now.Sub(a.LastSeen)), job, a.Last.MemoryMB)
	if e := ErrorText(l, a.Last); a.State == domain.StateError && e != "" {
		line += errorLabel + e
	}
	note := a.Last.Note
	if l == LocaleEn && a.Last.NoteEN != "" {
		note = a.Last.NoteEN
	}
	if note != "" {
		line += " | " + note
	}
	return line
}

// AlertText is the short message pushed to the admin when an incident opens or closes.
func AlertText(l Locale, ch domain.Change, now time.Time, timeout time.Duration, loc *time.Location) string {
	a := ch.Agent
	label := func(a domain.Agent) string { return label(a, ch.ShowReplica) }
	seen := a.LastSeen.In(loc).Format("15:04:05")
	switch ch.Alert() {
	case domain.AlertIncident:
		if a.State == domain.StateTimeout {
			if l == LocaleEn {
				return fmt.Sprintf("⚠️ Alert: %s is not responding (last seen %s, no heartbeat for over %s).", label(a), seen, span(l, timeout))
			}
			return fmt.Sprintf("⚠️ 異常: %s から応答がありません（最終確認 %s、%s以上ハートビートなし）。", label(a), seen, span(l, timeout))
		}
		msg := ErrorText(l, a.Last)
		if l == LocaleEn {
			if msg == "" {
				msg = "no detail"
			}
			return fmt.Sprintf("⚠️ Alert: %s reported an error: %s", label(a), msg)
		}
		if msg == "" {
			msg = "詳細なし"
		}
		return fmt.Sprintf("⚠️ 異常: %s がエラーを報告しました: %s", label(a), msg)
	case domain.AlertLeft:
		lasted := now.Sub(ch.IncidentSince)
		if l == LocaleEn {
			return fmt.Sprintf("ℹ️ Stopped: %s was shut down on purpose; its incident (%s) ends here.", label(a), span(l, lasted))
		}
		return fmt.Sprintf("ℹ️ 停止: %s は計画的に停止しました。異常（継続 %s）はここで終わりとします。", label(a), span(l, lasted))
	case domain.AlertReplaced:
		lasted := now.Sub(ch.IncidentSince)
		if !ch.ShowReplica {
			// The only replica came back under a new id: to the reader, the agent is back.
			if l == LocaleEn {
				return fmt.Sprintf("✅ Recovered: %s is back (the incident lasted %s).", label(a), span(l, lasted))
			}
			return fmt.Sprintf("✅ 復旧: %s が正常に戻りました（異常の継続 %s）。", label(a), span(l, lasted))
		}
		if l == LocaleEn {
			return fmt.Sprintf("✅ Recovered: %s was replaced by replica %s (the incident lasted %s).", label(a), ch.ReplacedBy, span(l, lasted))
		}
		return fmt.Sprintf("✅ 復旧: %s は新しいレプリカ %s に置き換わりました（異常の継続 %s）。", label(a), ch.ReplacedBy, span(l, lasted))
	case domain.AlertRecovery:
		lasted := now.Sub(ch.IncidentSince)
		if l == LocaleEn {
			return fmt.Sprintf("✅ Recovered: %s is back (%s; the incident lasted %s).", label(a), stateText(l, a.State), span(l, lasted))
		}
		return fmt.Sprintf("✅ 復旧: %s が正常に戻りました（%s、異常の継続 %s）。", label(a), stateText(l, a.State), span(l, lasted))
	}
	return ""
}

// errorTexts say what kind of failure an agent reported (the beat's error_code): a model
// provider's failure by its class, as chat says a coder's failure too.
var errorTexts = llm.FailureTexts

// errorDetailMax bounds what the report shows of an error's own words.
const errorDetailMax = 120

// ErrorText is the error an agent last reported, as the report says it in l: the kind of
// failure in the reader's language with the sender's short detail; an error without a known
// kind (another failure, an older sender) in its own words. Secrets are masked and the text is
// bounded either way. "" when there is none.
func ErrorText(l Locale, b domain.Beat) string {
	detail := clip(strings.Join(strings.Fields(redact.Secrets(b.ErrorMessage)), " "), errorDetailMax)
	code := b.ErrorCode
	if !errorTexts.Has(code) && strings.HasPrefix(code, "llm.") {
		code = llm.FailureOther // a kind a newer sender knows
	}
	if !errorTexts.Has(code) {
		return detail
	}
	kind := errorTexts.Text(string(l), code)
	switch {
	case detail == "":
		return kind
	case l == LocaleEn:
		return kind + " (" + detail + ")"
	}
	return kind + "（" + detail + "）"
}

func clip(s string, max int) string {
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
