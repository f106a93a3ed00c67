package e2e

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// requesterNotice is how the requester's chat is told that another person decided the job
// (Japanese, the suite's locale) and how it is told that the job expired.
const (
	noticeApproved = "が承認しました"
	noticeExpired  = "期限切れになりました"
)

// TestEveryJobIsOneTrace runs each way a job is acted on — a typed /approve, a pressed approve
// button, /deliberate with a typed /pick and a pressed button, an approval over the REST API (the
// requester's chat is told, and a typed /approve runs it), execution and the pushed result (the
// reply budget is so short that every result is pushed) — and checks on the exported spans that
// every span naming a job is in that job's trace or in a trace linked to it.
func TestEveryJobIsOneTrace(t *testing.T) {
	s := startSuite(t, binDir, "PICOCLAW_CHAT_REPLY_BUDGET=1ms")
	lc := &lineChat{s: s, t: t}

	// A typed /approve.
	typed := lc.request("01E2ETRACETYPED0000000001", codeRequest)
	lc.say("01E2ETRACETYPED0000000002", "/approve "+typed.job)
	lc.waitPushedResult(typed.job)

	// A pressed approve button.
	pressed := lc.request("01E2ETRACEPRESS0000000001", codeRequest)
	lc.press("01E2ETRACEPRESS0000000002", pressed.button(t, "approve"))
	lc.waitPushedResult(pressed.job)

	// /deliberate, a typed /pick, and the approve button of the request the pick made.
	before := len(s.lineMessages())
	lc.say("01E2ETRACEDELIB0000000001", "/deliberate docs/hello.md を作って")
	options := lc.wait("the deliberation's options", before, func(m outMessage) bool {
		return jobPattern.MatchString(m.text()) && len(buttonsOf(m, "pick")) > 0
	})
	picked := jobPattern.FindString(options.text())
	before = len(s.lineMessages())
	lc.say("01E2ETRACEPICK00000000001", "/pick "+picked+" 1")
	ask := lc.wait("the approval request of the pick", before, func(m outMessage) bool {
		return strings.Contains(m.text(), picked) && len(buttonsOf(m, "approve")) > 0
	})
	lc.press("01E2ETRACEPICK00000000002", buttonsOf(ask, "approve")[0])
	lc.waitPushedResult(picked)

	// Approved over the REST API: the requester's chat is told once, and /approve runs it.
	rest := lc.request("01E2ETRACEREST00000000001", codeRequest)
	var approved map[string]any
	s.approvalAPI(t, http.MethodPost, "/v1/jobs/"+rest.job+"/approve", map[string]any{}, &approved)
	lc.waitPush(rest.job+" notice", func(m outMessage) bool {
		return strings.Contains(m.text(), rest.job) && strings.Contains(m.text(), noticeApproved)
	})
	lc.say("01E2ETRACEREST00000000002", "/approve "+rest.job)
	lc.waitPushedResult(rest.job)

	s.noProblems(t)
	if n := countMessages(s.lineMessages(), func(m outMessage) bool { return strings.Contains(m.text(), noticeApproved) }); n != 1 {
		t.Errorf("%d requester notices, want 1 (for %s only)", n, rest.job)
	}
	jobs := []string{typed.job, pressed.job, picked, rest.job}
	s.stop(t)
	spans := s.otlp.Spans()
	for _, job := range jobs {
		main := assertJobTrace(t, spans, job)
		// Each job's own trace holds the decision, the execution and the pushed result.
		need := []string{"chat-mio/chat.handle_message", "approval/picoclaw.approval.v1.ApprovalService/Approve",
			"executor/picoclaw.executor.v1.ExecutorService/Execute", "approval/picoclaw.approval.v1.ApprovalService/ClaimJob",
			"gateway-line/picoclaw.gateway.v1.NotificationService/Push"}
		if job == rest.job {
			need = append(need, "approval/approval.approve", "approval/approval.notify_requester")
		}
		if job == picked {
			need = append(need, "coder-order/picoclaw.coder.v1.CoderService/ProposeMany")
		}
		assertTraceHolds(t, spans, job, main, need...)
	}
}

// TestExpiryJoinsTheJobsTraceAndTellsTheRequester: a job nobody decides expires by the sweeper,
// in the job's trace, and the requester's chat is told once.
func TestExpiryJoinsTheJobsTraceAndTellsTheRequester(t *testing.T) {
	s := startSuite(t, binDir, "PICOCLAW_APPROVAL_PENDING_TTL=1s", "PICOCLAW_APPROVAL_SWEEP_INTERVAL=200ms")
	lc := &lineChat{s: s, t: t}
	job := lc.request("01E2ETRACEEXPIRE000000001", codeRequest).job
	lc.waitPush(job+" expiry notice", func(m outMessage) bool {
		return strings.Contains(m.text(), job) && strings.Contains(m.text(), noticeExpired)
	})
	s.assertAudit(t, job, "requested", "expired")
	s.noProblems(t)
	if n := countMessages(s.lineMessages(), func(m outMessage) bool { return strings.Contains(m.text(), noticeExpired) }); n != 1 {
		t.Errorf("%d expiry notices, want 1", n)
	}
	s.stop(t)
	spans := s.otlp.Spans()
	main := assertJobTrace(t, spans, job)
	assertTraceHolds(t, spans, job, main, "approval/approval.expire", "approval/approval.notify_requester",
		"gateway-line/picoclaw.gateway.v1.NotificationService/Push")
}

// lineChat is the e2e user's 1:1 LINE chat.
type lineChat struct {
	s *suite
	t *testing.T
}

// asked is a job the suite asked to approve: its id and the request with its buttons.
type asked struct {
	job string
	msg outMessage
}

func (a asked) button(t *testing.T, kind string) string {
	t.Helper()
	bs := buttonsOf(a.msg, kind)
	if len(bs) == 0 {
		t.Fatalf("no %s button for %s: %+v", kind, a.job, a.msg.Buttons)
	}
	return bs[0]
}

// buttonsOf is the postback data of m's buttons of kind (the postback's a=).
func buttonsOf(m outMessage, kind string) []string {
	var out []string
	for _, b := range m.Buttons {
		if v, err := url.ParseQuery(b.Data); err == nil && v.Get("a") == kind {
			out = append(out, b.Data)
		}
	}
	return out
}

func countMessages(ms []outMessage, ok func(outMessage) bool) int {
	n := 0
	for _, m := range ms {
		if ok(m) {
			n++
		}
	}
	return n
}

// say sends text as the e2e user.
func (c *lineChat) say(id, text string) {
	c.t.Helper()
	c.s.lineWebhook(c.t, lineEvent(id, map[string]any{
		"type": "message", "message": map[string]any{"id": id, "type": "text", "quoteToken": "q" + id, "text": text},
	}))
}

// press presses a postback button.
func (c *lineChat) press(id, data string) {
	c.t.Helper()
	c.s.lineWebhook(c.t, lineEvent(id, map[string]any{"type": "postback", "postback": map[string]any{"data": data}}))
}

// wait returns the first message after the first before ones that satisfies ok.
func (c *lineChat) wait(what string, before int, ok func(outMessage) bool) outMessage {
	c.t.Helper()
	return waitMessage(c.t, what, flowTimeout, func() []outMessage { return c.s.lineMessages()[before:] }, c.s.line.Problems, ok)
}

// request sends the code request and returns the approval request it gets.
func (c *lineChat) request(id, text string) asked {
	c.t.Helper()
	before := len(c.s.lineMessages())
	c.say(id, text)
	m := c.wait("the approval request for "+id, before, func(m outMessage) bool {
		return jobPattern.MatchString(m.text()) && len(buttonsOf(m, "approve")) > 0
	})
	return asked{job: jobPattern.FindString(m.text()), msg: m}
}

// waitPush waits for a pushed message (not a reply) that satisfies ok.
func (c *lineChat) waitPush(what string, ok func(outMessage) bool) outMessage {
	c.t.Helper()
	return c.wait(what, 0, func(m outMessage) bool { return m.API == "push" && ok(m) })
}

// waitPushedResult waits for the job's result, pushed after the reply.
func (c *lineChat) waitPushedResult(job string) {
	c.t.Helper()
	c.waitPush("the pushed result of "+job, func(m outMessage) bool {
		return strings.Contains(m.text(), job) && strings.Contains(m.text(), resultLine)
	})
}

// assertJobTrace checks that every span naming job is in the job's trace — the trace of
// approval's RequestApproval for it, which stored that context — or in a trace that a span of
// the job's trace links to, or that links to it (a new request about the job: a typed command,
// a REST call, the sweeper's tick). It returns the job's trace.
func assertJobTrace(t *testing.T, spans []span, job string) string {
	t.Helper()
	main := ""
	for _, sp := range spans {
		if sp.JobID == job && sp.Service == "approval" && sp.Name == "picoclaw.approval.v1.ApprovalService/RequestApproval" {
			main = sp.TraceID
		}
	}
	if main == "" {
		t.Fatalf("no RequestApproval span of %s", job)
	}
	linked := map[string]bool{main: true}
	for _, sp := range spans {
		for _, l := range sp.Links {
			if sp.TraceID == main {
				linked[l.TraceID] = true
			}
			if l.TraceID == main {
				linked[sp.TraceID] = true
			}
		}
	}
	in, other := map[string]int{}, map[string][]string{}
	for _, sp := range spans {
		// A REST request naming the job (GET /v1/jobs/{id}…) is its caller's own trace.
		if sp.JobID != job || restSpan(sp) {
			continue
		}
		in[sp.TraceID]++
		if !linked[sp.TraceID] {
			other[sp.TraceID] = append(other[sp.TraceID], sp.Service+"/"+sp.Name)
		}
	}
	for tr, names := range other {
		t.Errorf("job %s: %d spans in trace %s, neither the job's trace %s nor linked to it: %v", job, len(names), tr, main, names)
	}
	t.Logf("job %s: trace %s; spans per trace %v", job, main, in)
	return main
}

// assertTraceHolds checks that the job's trace holds spans of each "service/name".
func assertTraceHolds(t *testing.T, spans []span, job, trace string, names ...string) {
	t.Helper()
	have := map[string]bool{}
	for _, sp := range spans {
		if sp.TraceID == trace {
			have[sp.Service+"/"+sp.Name] = true
		}
	}
	var missing []string
	for _, n := range names {
		if !have[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		all := make([]string, 0, len(have))
		for n := range have {
			all = append(all, n)
		}
		slices.Sort(all)
		t.Errorf("job %s: trace %s lacks %v; it holds %s", job, trace, missing, strings.Join(all, ", "))
	}
}

// restSpan is the REST API's server span of a request (named "<METHOD> /v1/…").
func restSpan(sp span) bool { return strings.Contains(sp.Name, " /v1/") }
