package app_test

import (
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// A decision that was applied says so (the channel may close the buttons); a refused one does
// not (the buttons stay for someone who may decide).
func TestActionAppliedOnlyWhenDecided(t *testing.T) {
	u := newUnit(t)
	if res := u.send(t, "/deny job_20261127_001", "en"); !res.GetActionApplied() {
		t.Fatalf("applied deny not marked: %v", res)
	}
	u.approvals.err = peerErr(domain.ErrForbidden, "not an approver")
	for _, cmd := range []string{"/approve job_20261127_001", "/deny job_20261127_001"} {
		if res := u.send(t, cmd, "en"); res.GetActionApplied() {
			t.Fatalf("%s: refused decision marked applied: %v", cmd, res)
		}
	}
	if res := u.send(t, "/pick job_20261127_009 1", "en"); res.GetActionApplied() {
		t.Fatalf("pick of an unknown deliberation marked applied: %v", res)
	}
}
