package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestCostOverLimitAsksToContinue: with a token limit the coder's prompt exceeds, a CODE request
// makes no model call but asks "continue at about $X?" as a job of its own; the REST API cannot
// approve it; the approver's button in the chat makes the one call (the proposal then waits for
// approval as usual and runs when approved); everything is in the audit log.
func TestCostOverLimitAsksToContinue(t *testing.T) {
	s := startSuite(t, binDir, "PICOCLAW_APPROVAL_TOKEN_LIMIT=50", "PICOCLAW_CHAT_REPLY_BUDGET=1ms")
	lc := &lineChat{s: s, t: t}
	before := s.openai.Calls()
	first := len(s.lineMessages())
	ask := lc.request("01E2ECOST0000000000000001", codeRequest)
	asked := false
	for _, m := range s.lineMessages()[first:] {
		asked = asked || (strings.Contains(m.text(), "続行しますか") && strings.Contains(m.text(), "$") && strings.Contains(m.text(), ask.job))
	}
	if !asked {
		t.Fatalf("no cost question for %s: %+v", ask.job, s.lineMessages()[first:])
	}
	if n := s.openai.Calls() - before; n != 0 {
		t.Fatalf("%d coder calls before anyone agreed to the cost", n)
	}
	// The REST API (the console) cannot give the go-ahead: it is answered in the chat.
	code := s.approvalAPIStatus(t, http.MethodPost, "/v1/jobs/"+ask.job+"/approve", map[string]any{})
	if code < 400 || code >= 500 {
		t.Fatalf("REST approval of a cost confirmation: status %d", code)
	}
	msgs := len(s.lineMessages())
	lc.press("01E2ECOST0000000000000002", ask.button(t, "approve"))
	next := lc.wait("the proposal after the go-ahead", msgs, func(m outMessage) bool {
		j := jobPattern.FindString(m.text())
		return j != "" && j != ask.job && len(buttonsOf(m, "approve")) > 0
	})
	job := jobPattern.FindString(next.text())
	if n := s.openai.Calls() - before; n != 1 {
		t.Fatalf("%d coder calls after the go-ahead, want 1", n)
	}
	lc.press("01E2ECOST0000000000000003", buttonsOf(next, "approve")[0])
	lc.waitPushedResult(job)
	s.noProblems(t)
	s.assertAudit(t, ask.job, "requested", "decision_rejected", "granted")
	s.assertAudit(t, job, "requested", "granted", "claimed", "execution_started", "execution_completed")
}

// approvalAPIStatus calls the approval REST API as the approver and returns the status.
func (s *suite) approvalAPIStatus(t *testing.T, method, path string, body any) int {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, s.publicURL("approval", path), bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+approvalToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Timeout: flowTimeout}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res.StatusCode
}
