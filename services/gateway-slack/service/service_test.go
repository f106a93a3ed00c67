package service_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/service"
)

// TestEventsVerificationAndDedupe: forged or missing signatures and stale timestamps get 401,
// oversized bodies 413, nothing is stored; url_verification is answered; a Slack retry of the
// same event_id is stored and answered once; bot messages, edits and channel chatter are ignored.
func TestEventsVerificationAndDedupe(t *testing.T) {
	h := start(t, nil)
	if code, body := h.event(t, fakeslack.URLVerification("chal-123"), nil); code != http.StatusOK || body != "chal-123" {
		t.Fatalf("url_verification: %d %q", code, body)
	}
	ev := fakeslack.EventBody("Ev001", fakeslack.Mention(allowed, "C100", "1700000000.000100", "", "こんにちは"))
	for _, tc := range []struct {
		name   string
		mutate func(*fakeslack.Request)
		want   int
	}{
		{"forged signature", func(r *fakeslack.Request) { r.Secret = "wrong-secret" }, http.StatusUnauthorized},
		{"missing signature", func(r *fakeslack.Request) { r.Secret = "" }, http.StatusUnauthorized},
		{"stale timestamp", func(r *fakeslack.Request) { r.At = time.Now().Add(-6 * time.Minute) }, http.StatusUnauthorized},
		{"future timestamp", func(r *fakeslack.Request) { r.At = time.Now().Add(6 * time.Minute) }, http.StatusUnauthorized},
		{"oversized body", func(r *fakeslack.Request) { r.Body = append(bytes.Repeat([]byte(" "), 1<<20), r.Body...) }, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, _ := h.event(t, ev, tc.mutate); code != tc.want {
				t.Fatalf("status %d, want %d", code, tc.want)
			}
		})
	}
	if n := h.StreamLen(); n != 0 {
		t.Fatalf("%d events stored from rejected requests", n)
	}
	for i := range 3 { // the event, then two Slack retries
		if code, _ := h.event(t, ev, func(r *fakeslack.Request) { r.RetryNum = i }); code != http.StatusOK {
			t.Fatalf("delivery %d: %d", i, code)
		}
	}
	ignored := []map[string]any{
		{"type": "app_mention", "user": "UOTHER", "bot_id": "B9", "text": "<@" + fakeslack.BotUserID + "> hi", "ts": "1.1", "channel": "C100"},
		{"type": "message", "channel_type": "im", "user": fakeslack.BotUserID, "text": "my own", "ts": "1.2", "channel": "D1"},
		{"type": "message", "channel_type": "im", "subtype": "message_changed", "text": "edit", "ts": "1.3", "channel": "D1"},
		{"type": "message", "channel_type": "channel", "user": allowed, "text": "chatter", "ts": "1.4", "channel": "C100"},
		{"type": "reaction_added", "user": allowed, "reaction": "+1", "event_ts": "1.5"},
	}
	for i, inner := range ignored {
		if code, _ := h.event(t, fakeslack.EventBody("EvIgnored"+string(rune('A'+i)), inner), nil); code != http.StatusOK {
			t.Fatalf("ignored event %d: %d", i, code)
		}
	}
	channeltest.WaitFor(t, "answer", func() bool { return len(h.postsIn("C100", "1700000000.000100")) == 1 && h.Pending() == 0 })
	if n := h.StreamLen(); n != 1 {
		t.Fatalf("stream holds %d entries, want 1", n)
	}
	if n := h.Chat.CountEvent("Ev001"); n != 1 {
		t.Fatalf("chat-mio called %d times", n)
	}
	req := h.Chat.Requests()[0]
	if req.GetText() != "こんにちは" || req.GetSessionId() != "slack:C100:1700000000.000100" || req.GetChannel() != "slack" || !req.GetIsGroup() {
		t.Fatalf("chat request %+v", req)
	}
	assertClean(t, h)
}

// TestRepliesInThreadAndDM: answers go to the thread the message belongs to, DMs included.
func TestRepliesInThreadAndDM(t *testing.T) {
	h := start(t, nil)
	h.event(t, fakeslack.EventBody("EvThread", fakeslack.Mention(allowed, "C200", "1700000100.000200", "1700000100.000001", "続き")), nil)
	h.event(t, fakeslack.EventBody("EvDM", fakeslack.DM(allowed2, "D200", "1700000100.000300", "DMです")), nil)
	channeltest.WaitFor(t, "answers", func() bool {
		return len(h.postsIn("C200", "1700000100.000001")) == 1 && len(h.postsIn("D200", "1700000100.000300")) == 1
	})
	if got := h.postsIn("D200", "1700000100.000300")[0].Text; got != "echo: DMです" {
		t.Fatalf("DM answer %q", got)
	}
	for _, r := range h.Chat.Requests() {
		if r.GetEventId() == "EvDM" && (r.GetIsGroup() || r.GetSessionId() != "slack:D200:1700000100.000300") {
			t.Errorf("DM request %+v", r)
		}
	}
	assertClean(t, h)
}

// TestApprovalButtons: an approval request carries approve/deny buttons and the typed commands;
// a press (parsed from the form payload) reaches chat-mio as an action, the buttons are removed,
// and a replayed press is deduplicated.
func TestApprovalButtons(t *testing.T) {
	h := start(t, nil)
	thread := "1700000200.000100"
	h.event(t, fakeslack.EventBody("EvApprove", fakeslack.Mention(allowed, "C300", thread, "", "approve")), nil)
	channeltest.WaitFor(t, "approval request", func() bool { return len(h.postsIn("C300", thread)) == 1 })
	p := h.postsIn("C300", thread)[0]
	job := "job_20261121_001"
	if !strings.Contains(p.Text, "/approve "+job) || !strings.Contains(p.Text, "/deny "+job) {
		t.Errorf("text lacks the typed commands: %q", p.Text)
	}
	if len(p.Blocks) != 2 || p.Blocks[1].Type != "actions" || len(p.Blocks[1].Elements) != 2 {
		t.Fatalf("blocks %+v", p.Blocks)
	}
	btn := p.Blocks[1].Elements[0]
	// The value is the job id and the traceparent of the trace the request was answered in.
	got, err := domain.ParseButton(btn.ActionID, btn.Value)
	if err != nil || btn.ActionID != "approve" || got.JobID != job || got.Trace == "" || btn.Style != "primary" {
		t.Fatalf("approve button %+v (%+v, %v)", btn, got, err)
	}
	press := fakeslack.BlockAction(allowed, "C300", p.TS, thread, p.Text, "trigger-1", btn.ActionID, btn.Value)
	for range 2 {
		if code := h.interact(t, press); code != http.StatusOK {
			t.Fatalf("interactive: %d", code)
		}
	}
	channeltest.WaitFor(t, "decision processed", func() bool { return len(h.postsIn("C300", thread)) == 2 && h.Pending() == 0 })
	var actions []*commonv1.Action
	for _, r := range h.Chat.Requests() {
		if a := r.GetAction(); a != nil {
			actions = append(actions, a)
		}
	}
	if len(actions) != 1 || actions[0].GetKind() != commonv1.ActionKind_ACTION_KIND_APPROVE || actions[0].GetJobId() != job {
		t.Fatalf("chat-mio got actions %+v", actions)
	}
	// The gateway allocated the message's JobID; the press continues the request's trace with
	// the pressed job's id.
	reqTrace, reqJob := h.Chat.TraceOf(t, "EvApprove")
	pressTrace, pressJob := h.Chat.TraceOf(t, "action:trigger-1")
	if !jobid.Valid(reqJob) || pressJob != job || pressTrace != reqTrace {
		t.Fatalf("request trace %s job %q; press trace %s job %q (want %s)", reqTrace, reqJob, pressTrace, pressJob, job)
	}
	var updates []fakeslack.Post
	for _, x := range h.slack.Posts() {
		if x.Method == "chat.update" {
			updates = append(updates, x)
		}
	}
	if len(updates) != 1 || updates[0].TS != p.TS || updates[0].Channel != "C300" {
		t.Fatalf("updates %+v\n%s", updates, h.Logs.String())
	}
	for _, b := range updates[0].Blocks {
		if b.Type == "actions" {
			t.Fatal("buttons still there after the decision")
		}
	}
	if len(updates[0].Blocks) != 2 || updates[0].Blocks[1].Type != "context" ||
		!strings.Contains(fakeslack.ElementText(updates[0].Blocks[1].Elements[0].Text), "<@"+allowed+"> が選択しました: 承認") {
		t.Errorf("decision note missing: %+v", updates[0].Blocks)
	}
	if h.interact(t, []byte("payload=%7Bnot-json")) != http.StatusBadRequest {
		t.Error("broken payload accepted")
	}
	assertClean(t, h)
}

// TestAllowlistAndDelivery: a stranger gets a refusal and nothing else; a post that fails half
// way is resumed from the outbox without repeating what was already posted.
func TestAllowlistAndDelivery(t *testing.T) {
	h := start(t, nil)
	h.event(t, fakeslack.EventBody("EvStranger", fakeslack.Mention("USTRANGER", "C400", "1700000300.000100", "", "やあ")), nil)
	channeltest.WaitFor(t, "refusal", func() bool { return len(h.postsIn("C400", "1700000300.000100")) == 1 })
	if got := h.postsIn("C400", "1700000300.000100")[0].Text; !strings.Contains(got, "登録されたユーザー") {
		t.Fatalf("refusal %q", got)
	}
	if h.Chat.CountEvent("EvStranger") != 0 {
		t.Fatal("a stranger's message reached chat-mio")
	}
	// A long answer is two messages; the second post fails twice, then Slack recovers.
	h.slack.FailPosts(1, 2, http.StatusInternalServerError)
	long := "slow:1 " + strings.Repeat("長い答え。", 700)
	h.event(t, fakeslack.EventBody("EvLong", fakeslack.Mention(allowed, "C401", "1700000300.000200", "", long)), nil)
	channeltest.WaitFor(t, "answer", func() bool { return h.Pending() == 0 && len(h.postsIn("C401", "1700000300.000200")) >= 2 })
	posts := h.postsIn("C401", "1700000300.000200")
	if len(posts) != 2 {
		t.Fatalf("%d posts for a two-part answer", len(posts))
	}
	if n := h.Chat.CountEvent("EvLong"); n != 1 {
		t.Errorf("chat-mio asked %d times: the failed posts are retried from the outbox, not by asking again", n)
	}
	if !strings.HasPrefix(posts[0].Text, "echo: slow:1") {
		t.Fatalf("first part %q", posts[0].Text[:20])
	}
	assertClean(t, h)
}

// TestNotificationPush: NotificationService.Push over Connect and gRPC posts to the session's
// thread once per retry key.
func TestNotificationPush(t *testing.T) {
	h := start(t, nil)
	thread := func(protocol string) string {
		return "1700000400.0000" + map[string]string{"connect": "01", "grpc": "02"}[protocol]
	}
	channeltest.CheckPushOnce(t, h.Internal, svcauth.GatewaySlack, func(p string) string { return "slack:C500:" + thread(p) }, "line:U1",
		func(p string) int { return len(h.postsIn("C500", thread(p))) }, func() bool { return h.Pending() == 0 })
	assertClean(t, h)
}

func TestConfigValidate(t *testing.T) {
	type c = channeltest.ConfigCase[service.Config]
	channeltest.CheckValidate(t, func() service.Config {
		cfg := service.DefaultConfig()
		cfg.Slack.SigningSecret, cfg.Slack.BotToken = testSecret, testToken
		return cfg
	}, (*service.Config).Validate, []c{
		{Name: "missing signing secret", Mutate: func(c *service.Config) { c.Slack.SigningSecret = "" }, Key: "slack.signing_secret"},
		{Name: "missing bot token", Mutate: func(c *service.Config) { c.Slack.BotToken = "" }, Key: "slack.bot_token"},
		{Name: "bad base url", Mutate: func(c *service.Config) { c.Slack.APIBaseURL = "slack.com" }, Key: "slack.api_base_url"},
		{Name: "short dedupe", Mutate: func(c *service.Config) { c.Slack.Inbox.DedupeTTL = time.Minute }, Key: "slack.inbox.dedupe_ttl"},
		{Name: "short approver token", Mutate: func(c *service.Config) { c.Slack.ApproverTokens = "ops:short" }, Key: "slack.approver_tokens"},
	})
}

// assertClean checks that Slack saw no request breaking its limits and no secret reached the log.
func assertClean(t *testing.T, h *harness) {
	t.Helper()
	channeltest.AssertClean(t, "Slack", h.slack.Problems(), h.Logs.String(), testSecret, testToken)
}

// TestExampleConfig: the suite's example file parses into this service's config and shows the
// defaults; secrets come from the environment only.
func TestExampleConfig(t *testing.T) {
	const secret, token = "from-env-0123456789abcdefghijklmnop", "xoxb-from-env-0123456789abcdefghijk"
	channeltest.CheckExampleConfig(t, channeltest.ExampleConfig[service.Config]{
		Path: "../../../config/picoclaw.example.yaml", Default: service.DefaultConfig, Validate: (*service.Config).Validate,
		Section:  func(c *service.Config) any { return c.Slack },
		Settings: func(c *service.Config) *channel.Settings { return &c.Slack.Settings },
		Env:      map[string]string{"SLACK_SIGNING_SECRET": secret, "SLACK_BOT_TOKEN": token, "PICOCLAW_SLACK_ALLOWED_USERS": "U1"},
		Applied: func(c *service.Config) bool {
			return c.Slack.SigningSecret.Value() == secret && len(c.Slack.AllowedUsers) == 1
		},
		Secrets: []string{secret, token},
	})
}

// TestEmptyAllowlistMeansNobody: without allowed users the gateway warns at start and refuses
// everyone politely.
func TestEmptyAllowlistMeansNobody(t *testing.T) {
	h := start(t, func(c *service.Config) { c.Slack.AllowedUsers = nil })
	if !strings.Contains(h.Logs.String(), "slack.allowlist_empty") {
		t.Fatal("no start-up warning for the empty allowlist")
	}
	h.event(t, fakeslack.EventBody("EvNobody", fakeslack.DM(allowed, "D9", "1700000500.000100", "やあ")), nil)
	channeltest.WaitFor(t, "refusal", func() bool { return len(h.postsIn("D9", "1700000500.000100")) == 1 })
	if !strings.Contains(h.postsIn("D9", "1700000500.000100")[0].Text, "登録されたユーザー") || len(h.Chat.Requests()) != 0 {
		t.Fatal("not refused")
	}
}
