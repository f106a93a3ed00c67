package fault

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestStates lists the shared words for a job's states in Japanese and English: the one table
// of them, whichever service says one. A state added to States must be added here.
func TestStates(t *testing.T) {
	if err := States.Check(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		status, code, ja, en string
	}{
		{"pending", StatePending, "承認待ち", "pending"},
		{"granted", StateGranted, "承認済み", "granted"},
		{"auto_approved", StateAutoApproved, "自動承認済み", "auto-approved"},
		{"denied", StateDenied, "却下済み", "denied"},
		{"expired", StateExpired, "期限切れ", "expired"},
		{"cancelled", StateCancelled, "取り消し済み", "cancelled"},
		{"executing", StateExecuting, "実行中", "executing"},
		{"completed", StateCompleted, "実行済み", "completed"},
		{"failed", StateFailed, "失敗済み", "failed"},
		{"refused", StateRefused, "拒否済み", "refused"},
		{"answered", StateAnswered, "回答済み", "answered"},
		{"paused", StateUnknown, "不明な状態", "in an unknown state"},
	}
	var listed []string
	for _, tt := range tests {
		listed = append(listed, tt.code)
		if got := State(tt.status); string(got) != tt.code {
			t.Errorf("State(%q) = %s, want %s", tt.status, got, tt.code)
		}
		if got := States.Text("ja", tt.code); got != tt.ja {
			t.Errorf("%s ja = %q, want %q", tt.code, got, tt.ja)
		}
		if got := States.Text("en", tt.code); got != tt.en {
			t.Errorf("%s en = %q, want %q", tt.code, got, tt.en)
		}
		if strings.ContainsFunc(tt.en, func(r rune) bool { return r > unicode.MaxASCII }) {
			t.Errorf("%s en has non-English text: %q", tt.code, tt.en)
		}
		if tt.code != StateUnknown {
			if !KnownState(tt.status) || StateText("ja", tt.status) != tt.ja || StateText("en-US", tt.status) != tt.en {
				t.Errorf("StateText(%q) = %q / %q", tt.status, StateText("ja", tt.status), StateText("en-US", tt.status))
			}
		}
	}
	States.ReportUncovered(t.Errorf, func(code string) bool { return slices.Contains(listed, code) })
	if KnownState("paused") || StateText("ja", "paused") != "paused" {
		t.Errorf("an unknown status is shown as it is: %q", StateText("ja", "paused"))
	}
}

// Every catalog says the shared words: as a Term in its messages and by code; a catalog that
// says one otherwise fails its check.
func TestCatalogsShareStates(t *testing.T) {
	c := Catalog{"NOT_RUN": {"ジョブ %[1]s は%[2]sのため実行できません", "job %[1]s is %[2]s"}}
	m := c.New(nil, "NOT_RUN", "job_1", State("denied"))
	if got := m.Text("ja"); got != "ジョブ job_1 は却下済みのため実行できません" {
		t.Errorf("ja: %q", got)
	}
	if got := m.Error(); got != "job job_1 is denied" {
		t.Errorf("en: %q", got)
	}
	if !c.Has(StatePending) || c.Text("en", StateExpired) != "expired" {
		t.Error("a catalog lacks the shared words")
	}
	if err := (Catalog{StateFailed: {"失敗", "failed"}}).Check(); err == nil {
		t.Error("a catalog that says a shared word otherwise passed the check")
	}
	if err := (Catalog{StateFailed: States[StateFailed]}).Check(); err != nil {
		t.Errorf("the shared word itself: %v", err)
	}
}
