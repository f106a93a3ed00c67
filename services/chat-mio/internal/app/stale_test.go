package app_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// A proposal that no longer applies to the workspace is told to the user at once: no approval
// is asked and nothing is offered or run. An executor that cannot answer does not block asking.
func TestStaleProposalIsToldBeforeAnyApproval(t *testing.T) {
	for _, loc := range []string{"ja", "en"} {
		u := newUnit(t)
		u.executor.stale = "calc.go: fragment line does not match src line"
		res := u.send(t, "/code guide", loc)
		got := text(res)
		want := map[string]string{"ja": "適用できません", "en": "no longer applies"}[loc]
		if !strings.Contains(got, want) || !strings.Contains(got, "calc.go") || !strings.Contains(got, res.GetJobId()) {
			t.Fatalf("%s: %q", loc, got)
		}
		if len(u.approvals.inputs) != 0 || len(actions(res)) != 0 || len(u.executor.executed()) != 0 {
			t.Fatalf("%s: asked approval %d times, offered %d actions", loc, len(u.approvals.inputs), len(actions(res)))
		}
	}
	u := newUnit(t)
	u.executor.checkErr = &domain.PeerError{Peer: "executor", Kind: domain.ErrUnavailable, Cause: errors.New("down")}
	u.send(t, "/code guide", "en")
	if len(u.approvals.inputs) != 1 || u.executor.checks != 1 {
		t.Fatalf("executor down: approval asked %d times after %d checks", len(u.approvals.inputs), u.executor.checks)
	}
}
