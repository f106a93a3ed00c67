package domain

import (
	"fmt"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
)

// DecidedFrom records on a person's decision among drafts (granted, denied, cancelled) the chat
// session they decided from; "" stands for the REST API and the console.
func DecidedFrom(session string, drafts []Draft) []Draft {
	if session == "" {
		return drafts
	}
	for i, d := range drafts {
		switch d.Type {
		case EventGranted:
			drafts[i].Payload = DecisionPayload{DecidedIn: session}
		case EventDenied, EventCancelled:
			p, _ := d.Payload.(ReasonPayload)
			p.DecidedIn = session
			drafts[i].Payload = p
		}
	}
	return drafts
}

// Notice is a message the requester's chat is owed about how its job was decided.
type Notice struct {
	JobID     string
	SessionID string
	// Status is the decision: granted, denied, cancelled or expired.
	Status Status
	// At is when the notice became owed (the decision's time).
	At time.Time
	// Attempts counts the deliveries tried so far.
	Attempts int
	// TraceParent is the job's trace: the delivery joins it.
	TraceParent string
}

// NoticeOf is the notice the change from prev to next owes the requester's chat, if any: a job
// that leaves pending by expiry, or by a person's decision made anywhere but the requester's own
// chat (another chat, the REST API, the console). A decision made in the requester's chat is
// answered there and owes nothing; a job without a chat session has nobody to tell.
func NoticeOf(prev, next Job) (Notice, bool) {
	if next.SessionID == "" {
		return Notice{}, false
	}
	n := Notice{JobID: next.ID, SessionID: next.SessionID, Status: next.Status, At: next.DecidedAt, TraceParent: next.TraceParent}
	if prev.Status == StatusExecuting && next.Status == StatusFailed && next.Interrupted {
		// Nobody waits on an executor that stopped: the requester is told here.
		n.At = next.FinishedAt
		return n, true
	}
	if prev.Status != StatusPending {
		return Notice{}, false
	}
	switch next.Status {
	case StatusExpired:
		return n, true
	case StatusGranted, StatusDenied, StatusCancelled:
		return n, next.DecidedIn != next.SessionID
	}
	return Notice{}, false
}

// NoticeText is the requester's message about the decision of j (decision: the status the
// notice was owed for — the job may have moved on since, e.g. to executing), in j's locale
// (Japanese by default), times in loc.
func NoticeText(j Job, decision Status, loc *time.Location) string {
	en := strings.HasPrefix(strings.ToLower(j.Locale), "en")
	if loc == nil {
		loc = time.UTC
	}
	who := j.DecidedBy.DisplayName
	if who == "" {
		who = j.DecidedBy.Channel + ":" + j.DecidedBy.ID
	}
	who = SafeLine(who, 80)
	var text string
	switch decision {
	case StatusExpired:
		at := j.ExpiresAt.In(loc).Format("2006-01-02 15:04 MST")
		if en {
			return fmt.Sprintf("⌛ %s expired: nobody decided it by %s, so it will not run. Ask again if you still need it.", j.ID, at)
		}
		return fmt.Sprintf("⌛ %s は期限（%s）までに判断されなかったため、期限切れになりました。実行されません。必要ならもう一度依頼してください。", j.ID, at)
	case StatusGranted:
		text = inLocale(en, fmt.Sprintf("✅ %s was approved by %s.", j.ID, who), fmt.Sprintf("✅ %s は %s が承認しました。", j.ID, who))
		if j.DecidedIn == "" {
			// Approved on the console or over the REST API: nothing runs it until chat asks.
			text += "\n" + inLocale(en, fmt.Sprintf("It was approved outside chat; send /approve %s to run it.", j.ID),
				fmt.Sprintf("チャットの外で承認されました。実行するには /approve %s と送ってください。", j.ID))
		}
	case StatusDenied:
		text = inLocale(en, fmt.Sprintf("⛔ %s was denied by %s.", j.ID, who), fmt.Sprintf("⛔ %s は %s が却下しました。", j.ID, who))
		if r := SafeLine(j.DenyReason, 200); r != "" {
			text += "\n" + inLocale(en, "Reason: ", "理由: ") + r
		}
	case StatusCancelled:
		text = inLocale(en, fmt.Sprintf("🚫 %s was cancelled by %s.", j.ID, who), fmt.Sprintf("🚫 %s は %s が取り消しました。", j.ID, who))
		if r := SafeLine(j.DenyReason, 200); r != "" {
			text += "\n" + inLocale(en, "Reason: ", "理由: ") + r
		}
	case StatusFailed:
		if j.Interrupted {
			return inLocale(en,
				fmt.Sprintf("⚠️ %s stopped: its executor stopped during the auto-approved run, and Auto-Approve is no longer on, so the rest was not run. Operations already applied stay applied. Send /retry %s to ask again.", j.ID, j.ID),
				fmt.Sprintf("⚠️ %s は中断しました。自動承認での実行中に executor が止まり、その後 Auto-Approve がオフになったため、残りは実行しません。適用済みの操作はそのままです。もう一度依頼するには /retry %s と送ってください。", j.ID, j.ID))
		}
		text = inLocale(en, fmt.Sprintf("%s failed.", j.ID), fmt.Sprintf("%s は失敗しました。", j.ID))
	default:
		state := fault.StateText(j.Locale, string(decision))
		text = inLocale(en, fmt.Sprintf("%s is now %s.", j.ID, state), fmt.Sprintf("%s は%sになりました。", j.ID, state))
	}
	return text
}

func inLocale(en bool, english, japanese string) string {
	if en {
		return english
	}
	return japanese
}
