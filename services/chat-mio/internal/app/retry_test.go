package app_test

import (
	"strings"
	"testing"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
)

// /retry asks the same order again for the same request, under a new job; another
// conversation cannot retry (or read) it.
func TestRetryAsksTheSameOrderAgainUnderANewJob(t *testing.T) {
	e := newEnv(t)
	first := e.send(t, approver, codeMsg)
	old := first.GetJobId()
	if !strings.Contains(text(first), old) || len(e.peers.Router.Requests()) != 1 {
		t.Fatalf("premise: a proposal waits for approval: %s", text(first))
	}
	res := e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: "/retry " + old})
	got := text(res)
	if res.GetJobId() == old || res.GetJobId() == "" {
		t.Fatalf("the retry kept job %s", res.GetJobId())
	}
	mustContain(t, got, old, "order2", res.GetJobId())
	reqs := e.peers.Router.Requests()
	if len(reqs) != 2 || reqs[1].GetText() != "/order2 docs/guide.md を作って" {
		t.Fatalf("router got %d requests, last %q", len(reqs), reqs[len(reqs)-1].GetText())
	}
	if reqs[1].GetJobId() != res.GetJobId() {
		t.Errorf("the retry ran under job %s, want %s", reqs[1].GetJobId(), res.GetJobId())
	}
	// A new approval request for the new job, with its buttons.
	if a := actions(res); len(a) == 0 || a[0].GetJobId() != res.GetJobId() {
		t.Errorf("no approval request for the new job: %v", a)
	}

	other := e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: "line:Uother", Channel: "line", UserId: "Uother", Text: "/retry " + old})
	if strings.Contains(text(other), "guide.md") || len(e.peers.Router.Requests()) != 2 {
		t.Fatalf("another conversation retried the request: %s", text(other))
	}
	mustContain(t, text(other), old)
	unknown := e.send(t, approver, "/retry job_20200101_001")
	mustContain(t, text(unknown), "job_20200101_001")
	if len(e.peers.Router.Requests()) != 2 {
		t.Fatal("an unknown job was retried")
	}
}
