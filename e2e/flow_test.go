package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
)

// flowTimeout bounds each wait for a message; the models answer at once, so this only absorbs
// a loaded machine.
const flowTimeout = 30 * time.Second

var jobPattern = regexp.MustCompile(`job_[0-9]{8}_(?:[0-9]{3,}|[0-9a-f]{8})`)

// resultLine is the executor's summary of a one-file job that succeeded.
const resultLine = "実行: 1 件, 成功: 1 件, 失敗: 0 件"

// codeRequest is the user's request in every scenario: order2 proposes docs/hello.md.
const codeRequest = "/code2 docs/hello.md を作って"

// lineEvent is one webhook event from the e2e user's 1:1 chat.
func lineEvent(id string, extra map[string]any) map[string]any {
	ev := map[string]any{
		"mode": "active", "timestamp": time.Now().UnixMilli(), "webhookEventId": id,
		"source":          map[string]any{"type": "user", "userId": lineUser},
		"deliveryContext": map[string]any{"isRedelivery": false},
		"replyToken":      "rt-" + id,
	}
	for k, v := range extra {
		ev[k] = v
	}
	return ev
}

func (s *suite) lineWebhook(t *testing.T, events ...map[string]any) {
	t.Helper()
	for _, ev := range events {
		if tok, ok := ev["replyToken"].(string); ok {
			s.line.IssueReplyToken(tok)
		}
	}
	body, err := json.Marshal(map[string]any{"destination": "Ue2ebot", "events": events})
	if err != nil {
		t.Fatal(err)
	}
	post(t, s.publicURL("gateway-line", "/line/webhook"), "application/json", body,
		map[string]string{"X-Line-Signature": fakeline.Sign(lineSecret, body)})
}

func TestLINEApprovalFlow(t *testing.T) {
	start := time.Now()
	s := startSuite(t, binDir)
	t.Logf("suite started in %v", time.Since(start).Round(time.Millisecond))

	s.lineWebhook(t, lineEvent("01E2ETEXT0000000000000001", map[string]any{
		"type": "message", "message": map[string]any{"id": "1", "type": "text", "quoteToken": "q1", "text": codeRequest},
	}))
	ask := waitMessage(t, "approval request with buttons", flowTimeout, s.lineMessages, s.line.Problems, func(m outMessage) bool {
		return len(m.Buttons) == 3 // approve, deny, approve similar
	})
	job := jobPattern.FindString(ask.text())
	if job == "" || ask.API != "reply" {
		t.Fatalf("approval request %+v: want a reply naming the job", ask)
	}
	var approve string
	for _, b := range ask.Buttons {
		if v, err := url.ParseQuery(b.Data); err == nil && v.Get("a") == "approve" {
			approve = b.Data
			if v.Get("j") != job {
				t.Fatalf("approve button for %s, request for %s", v.Get("j"), job)
			}
		}
	}
	if approve == "" || len(approve) > 300 {
		t.Fatalf("approve button data %q (buttons %+v)", approve, ask.Buttons)
	}

	s.lineWebhook(t, lineEvent("01E2EPOSTBACK000000000001", map[string]any{
		"type": "postback", "postback": map[string]any{"data": approve},
	}))
	done := waitMessage(t, "execution result", flowTimeout, s.lineMessages, s.line.Problems, func(m outMessage) bool {
		return strings.Contains(m.text(), resultLine)
	})
	if !strings.Contains(done.text(), job) {
		t.Errorf("result does not name %s: %q", job, done.text())
	}
	s.assertHelloDelivered(t, job, start, "gateway-line", "line")
}

// slackEvent posts a signed Events API callback.
func (s *suite) slackEvent(t *testing.T, id string, event map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"token": "unused", "team_id": "TE2E", "api_app_id": "AE2E", "type": "event_callback",
		"event_id": id, "event_time": time.Now().Unix(), "event": event})
	if err != nil {
		t.Fatal(err)
	}
	s.slackPost(t, "/slack/events", "application/json", body)
}

func (s *suite) slackPost(t *testing.T, path, contentType string, body []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.publicURL("gateway-slack", path), strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	ts := time.Now().Unix()
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-Slack-Signature", fakeslack.Sign(slackSecret, ts, body))
	do(t, req)
}

func TestSlackApprovalFlow(t *testing.T) {
	start := time.Now()
	s := startSuite(t, binDir)
	t.Logf("suite started in %v", time.Since(start).Round(time.Millisecond))

	const channel, threadTS = "CE2E", "1790000000.000001"
	s.slackEvent(t, "EvE2E0001", map[string]any{
		"type": "app_mention", "user": slackUser, "channel": channel, "ts": threadTS, "event_ts": threadTS,
		"text": "<@" + slackBotUser + "> " + codeRequest,
	})
	ask := waitMessage(t, "approval request with buttons", flowTimeout, s.slackMessages, s.slack.Problems, func(m outMessage) bool {
		return m.API == "chat.postMessage" && len(m.Buttons) == 3 // approve, deny, approve similar
	})
	if ask.To != channel+":"+threadTS {
		t.Errorf("approval request went to %s, want the thread %s:%s", ask.To, channel, threadTS)
	}
	job := jobPattern.FindString(ask.text())
	var approve *button
	for i, b := range ask.Buttons {
		if b.Kind == "approve" {
			approve = &ask.Buttons[i]
		}
	}
	if job == "" || approve == nil || !strings.HasPrefix(approve.Data, job) {
		t.Fatalf("approval request %+v (job %q)", ask, job)
	}
	msgTS := ask.TS
	payload, err := json.Marshal(map[string]any{
		"type": "block_actions", "trigger_id": "e2e-trigger-1",
		"user": map[string]any{"id": slackUser}, "team": map[string]any{"id": "TE2E"},
		"channel":   map[string]any{"id": channel},
		"container": map[string]any{"type": "message", "message_ts": msgTS, "channel_id": channel},
		"message":   map[string]any{"ts": msgTS, "thread_ts": threadTS, "text": ask.text()},
		"actions": []map[string]any{{"type": "button", "action_id": approve.Kind, "block_id": "approval",
			"value": approve.Data, "action_ts": fmt.Sprintf("%d.000100", time.Now().Unix())}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.slackPost(t, "/slack/interactive", "application/x-www-form-urlencoded",
		[]byte(url.Values{"payload": {string(payload)}}.Encode()))
	done := waitMessage(t, "execution result", flowTimeout, s.slackMessages, s.slack.Problems, func(m outMessage) bool {
		return m.API == "chat.postMessage" && strings.Contains(m.text(), resultLine)
	})
	if done.To != channel+":"+threadTS || !strings.Contains(done.text(), job) {
		t.Errorf("result %+v, want it in %s:%s naming %s", done, channel, threadTS, job)
	}
	s.assertHelloDelivered(t, job, start, "gateway-slack", "slack")
}

func TestCLIAutoApproveFlow(t *testing.T) {
	start := time.Now()
	s := startSuite(t, binDir)
	t.Logf("suite started in %v", time.Since(start).Round(time.Millisecond))

	var grant map[string]any
	s.approvalAPI(t, http.MethodPut, "/v1/auto-approve", map[string]any{
		"ttl": "10m", "path_prefixes": []string{"docs/"}, "reason": "e2e",
	}, &grant)
	if grant["active"] != true {
		t.Fatalf("auto-approve not on: %v", grant)
	}

	// The terminal channel talks to chat-mio directly (Connect, JSON).
	req, err := json.Marshal(map[string]any{"sessionId": "cli:" + cliUser, "channel": "cli", "userId": cliUser, "text": codeRequest})
	if err != nil {
		t.Fatal(err)
	}
	// As the terminal does: its service token for chat-mio and its word for who is typing.
	term := testinfra.Credentials(t, svcauth.CLI)
	tok, err := term.ServiceToken(svcauth.ChatMio, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	assertion, err := term.Vouch("cli", cliUser, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	out := post(t, s.url("chat-mio", "/picoclaw.chat.v1.ChatService/HandleMessage"), "application/json", req,
		map[string]string{svcauth.ServiceTokenHeader: tok, svcauth.PrincipalHeader: assertion})
	var res struct {
		JobID    string `json:"jobId"`
		Messages []struct {
			Text string `json:"text"`
		} `json:"messages"`
		AsyncPending bool `json:"asyncPending"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, m := range res.Messages {
		text = append(text, m.Text)
	}
	reply := strings.Join(text, "\n")
	if res.JobID == "" || res.AsyncPending || !strings.Contains(reply, resultLine) || !strings.Contains(reply, res.JobID) {
		t.Fatalf("reply %s", out)
	}
	t.Logf("request to result in %v", time.Since(start).Round(time.Millisecond))
	s.assertFile(t, "docs/hello.md", helloContent)
	s.assertAudit(t, res.JobID, "requested", "auto_approved", "claimed", "execution_started", "execution_completed")
	s.noProblems(t)
	s.assertOneTrace(t, res.JobID, []string{"chat-mio", "router-shiro", "coder-order", "approval", "executor"},
		map[string]int{"chat-mio/picoclaw.chat.v1.ChatService/HandleMessage": 1, "chat-mio/chat.handle_message": 1,
			"executor/picoclaw.executor.v1.ExecutorService/Execute": 1})
}

// TestLINEApproveSimilarFlow: "approve and allow similar" on a LINE approval request runs the
// job and lets the next similar job (same directory, task type and kind) run without asking;
// /auto-approve off ends that, and the next one asks again. Every step is in the audit log.
func TestLINEApproveSimilarFlow(t *testing.T) {
	s := startSuite(t, binDir)
	// request sends the code request and returns the message that settles it: an approval
	// request with buttons, or the result.
	request := func(id string) outMessage {
		t.Helper()
		before := len(s.lineMessages())
		s.lineWebhook(t, lineEvent(id, map[string]any{
			"type": "message", "message": map[string]any{"id": id, "type": "text", "quoteToken": "q" + id, "text": codeRequest},
		}))
		return waitMessage(t, "the answer to "+id, flowTimeout, func() []outMessage { return s.lineMessages()[before:] }, s.line.Problems,
			func(m outMessage) bool {
				return jobPattern.MatchString(m.text()) && (len(m.Buttons) > 0 || strings.Contains(m.text(), "実行:"))
			})
	}
	first := request("01E2ESIMILAR0000000000001")
	job := jobPattern.FindString(first.text())
	similar := ""
	for _, b := range first.Buttons {
		if v, err := url.ParseQuery(b.Data); err == nil && v.Get("a") == "approve_similar" && v.Get("j") == job {
			similar = b.Data
		}
	}
	if similar == "" {
		t.Fatalf("no approve-similar button for %s: %+v", job, first.Buttons)
	}
	before := len(s.lineMessages())
	s.lineWebhook(t, lineEvent("01E2ESIMILARPRESS00000001", map[string]any{"type": "postback", "postback": map[string]any{"data": similar}}))
	waitMessage(t, "the first job's result", flowTimeout, func() []outMessage { return s.lineMessages()[before:] }, s.line.Problems,
		func(m outMessage) bool { return strings.Contains(m.text(), resultLine) })
	s.assertAudit(t, job, "requested", "granted", "claimed", "execution_started", "execution_completed")

	// The same kind of change again: no question, it runs.
	second := request("01E2ESIMILAR0000000000002")
	job2 := jobPattern.FindString(second.text())
	if len(second.Buttons) != 0 || job2 == job {
		t.Fatalf("similar job %s asked again: %+v", job2, second)
	}
	testinfra.Eventually(t, flowTimeout, "the similar job's audit", func() bool {
		var log auditLog
		s.approvalAPI(t, "GET", "/v1/jobs/"+job2+"/events", nil, &log)
		return strings.Contains(strings.Join(log.types(), ","), "auto_approved")
	})

	// Switched off, the next one asks a person again.
	before = len(s.lineMessages())
	s.lineWebhook(t, lineEvent("01E2ESIMILAROFF0000000001", map[string]any{
		"type": "message", "message": map[string]any{"id": "off1", "type": "text", "quoteToken": "qoff", "text": "/auto-approve off"},
	}))
	waitMessage(t, "the Auto-Approve off confirmation", flowTimeout, func() []outMessage { return s.lineMessages()[before:] }, s.line.Problems,
		func(m outMessage) bool { return strings.Contains(m.text(), "Auto-Approve") })
	third := request("01E2ESIMILAR0000000000003")
	if len(third.Buttons) == 0 {
		t.Fatalf("after /auto-approve off the job ran without asking: %+v", third)
	}
}

// assertHelloDelivered checks the end of a hello flow through a chat gateway (named gateway, its
// spans prefixed channel): the file written, the full audit trail, no API problem, and both
// webhooks (the request and the button press) processed in the job's one trace.
func (s *suite) assertHelloDelivered(t *testing.T, job string, start time.Time, gateway, channel string) {
	t.Helper()
	t.Logf("request to result in %v", time.Since(start).Round(time.Millisecond))
	s.assertFile(t, "docs/hello.md", helloContent)
	s.assertAudit(t, job, "requested", "granted", "claimed", "execution_started", "execution_completed")
	s.noProblems(t)
	s.assertOneTrace(t, job, []string{gateway, "chat-mio", "router-shiro", "coder-order", "approval", "executor"},
		map[string]int{gateway + "/" + channel + ".receive": 2, gateway + "/" + channel + ".event": 2, "chat-mio/chat.handle_message": 2,
			"executor/picoclaw.executor.v1.ExecutorService/Execute": 1})
}
