package fault

// States are the words for a job's states (approval's statuses), said the same by every
// service: every catalog has them (a Term of one of these codes renders in any catalog), so
// approval's refusals, the executor's and chat's replies name a state alike.
var States = Catalog{
	StatePending:      {"承認待ち", "pending"},
	StateGranted:      {"承認済み", "granted"},
	StateAutoApproved: {"自動承認済み", "auto-approved"},
	StateDenied:       {"却下済み", "denied"},
	StateExpired:      {"期限切れ", "expired"},
	StateCancelled:    {"取り消し済み", "cancelled"},
	StateExecuting:    {"実行中", "executing"},
	StateCompleted:    {"実行済み", "completed"},
	StateFailed:       {"失敗済み", "failed"},
	StateRefused:      {"拒否済み", "refused"},
	StateAnswered:     {"回答済み", "answered"},
	StateUnknown:      {"不明な状態", "in an unknown state"},
}

// The codes of States.
const (
	StatePending      = "STATE_PENDING"
	StateGranted      = "STATE_GRANTED"
	StateAutoApproved = "STATE_AUTO_APPROVED"
	StateDenied       = "STATE_DENIED"
	StateExpired      = "STATE_EXPIRED"
	StateCancelled    = "STATE_CANCELLED"
	StateExecuting    = "STATE_EXECUTING"
	StateCompleted    = "STATE_COMPLETED"
	StateFailed       = "STATE_FAILED"
	StateRefused      = "STATE_REFUSED"
	StateAnswered     = "STATE_ANSWERED"
	StateUnknown      = "STATE_UNKNOWN"
)

// stateCodes are the codes of approval's job statuses, by status.
var stateCodes = map[string]string{
	"pending": StatePending, "granted": StateGranted, "auto_approved": StateAutoApproved,
	"denied": StateDenied, "expired": StateExpired, "cancelled": StateCancelled,
	"executing": StateExecuting, "completed": StateCompleted, "failed": StateFailed,
	"refused": StateRefused, "answered": StateAnswered,
}

// State is the job status ("pending", "auto_approved", …, as approval names them) as a word of
// States; a status it does not know is STATE_UNKNOWN.
func State(status string) Term {
	if code, ok := stateCodes[status]; ok {
		return Term(code)
	}
	return StateUnknown
}

// KnownState reports whether status is one of approval's job statuses.
func KnownState(status string) bool {
	_, ok := stateCodes[status]
	return ok
}

// StateText is the job status said in locale; a status it does not know is shown as it is.
func StateText(locale, status string) string {
	if !KnownState(status) {
		return status
	}
	return States.Text(locale, string(State(status)))
}
