package service_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

// TestWebhookRejectsForgedOversizedAndReplayed: bad or missing signatures and oversized bodies
// are refused before anything is stored; the verify request is answered; a replayed event is
// acknowledged but stored and processed once.
func TestWebhookRejectsForgedOversizedAndReplayed(t *testing.T) {
	h := start(t, nil)
	if got := h.post(t, testSecret, fakeline.Body()); got != http.StatusOK {
		t.Fatalf("verify request: %d", got)
	}
	ev := fakeline.TextEvent("01EVREPLAY", allowed, "", "rt-01EVREPLAY-"+allowed, "こんにちは", nowMillis(), false)
	h.line.IssueReplyToken("rt-01EVREPLAY-" + allowed)
	body := fakeline.Body(ev)
	for _, tc := range []struct {
		name   string
		secret string
		body   []byte
		want   int
	}{
		{"forged signature", "not-the-channel-secret", body, http.StatusBadRequest},
		{"missing signature", "", body, http.StatusBadRequest},
		{"oversized body", testSecret, append(bytes.Repeat([]byte(" "), 1<<20), body...), http.StatusRequestEntityTooLarge},
		{"not JSON", testSecret, []byte("{nope"), http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := h.post(t, tc.secret, tc.body); got != tc.want {
				t.Fatalf("status %d, want %d", got, tc.want)
			}
		})
	}
	// The same oversized body sent in chunks, without a length to refuse it by up front: the
	// cap stops the read.
	big := append(bytes.Repeat([]byte(" "), 1<<20), body...)
	req, err := http.NewRequest(http.MethodPost, h.URL+service.WebhookPath, io.MultiReader(bytes.NewReader(big)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Line-Signature", fakeline.Sign(testSecret, big))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge || req.ContentLength != 0 {
		t.Fatalf("chunked oversized body: %d (length sent %d)", res.StatusCode, req.ContentLength)
	}
	if n := h.StreamLen(); n != 0 {
		t.Fatalf("%d events stored from rejected requests", n)
	}
	// The real event, then LINE retrying it twice (the second time flagged as a redelivery).
	for i, b := range [][]byte{body, body, fakeline.Body(fakeline.TextEvent("01EVREPLAY", allowed, "", "rt-01EVREPLAY-"+allowed, "こんにちは", nowMillis(), true))} {
		if got := h.post(t, testSecret, b); got != http.StatusOK {
			t.Fatalf("delivery %d: %d", i, got)
		}
	}
	channeltest.WaitFor(t, "answer", func() bool { return len(h.sentTo(allowed)) == 1 && h.Pending() == 0 })
	if n := h.StreamLen(); n != 1 {
		t.Fatalf("stream holds %d entries, want 1", n)
	}
	if n := h.Chat.CountEvent("01EVREPLAY"); n != 1 {
		t.Fatalf("chat-mio called %d times for one event", n)
	}
	if got := h.sentTo(allowed); len(got) != 1 || got[0].Kind != "reply" {
		t.Fatalf("sent %+v", got)
	}
	res, err = http.Get(h.Internal + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	want := `picoclaw_inbox_events_total{outcome="duplicate",stream="` + h.Stream + `"} 2`
	if !strings.Contains(string(metrics), want) {
		t.Errorf("metrics lack %s", want)
	}
	// A sticker is answered with what is supported (chat-mio is not asked); a join is
	// acknowledged without being stored.
	if got := h.post(t, testSecret, fakeline.Body(
		fakeline.OtherEvent("01EVSTICKER", "message", allowed, nowMillis()),
		fakeline.OtherEvent("01EVJOIN", "join", allowed, nowMillis()),
	)); got != http.StatusOK {
		t.Fatalf("ignored events: %d", got)
	}
	channeltest.WaitFor(t, "the sticker's answer", func() bool { return len(h.sentTo(allowed)) == 2 })
	if got := h.sentTo(allowed)[1]; len(got.Messages) != 1 || !strings.Contains(got.Messages[0].Text, "読めるのは文章と画像") {
		t.Fatalf("sticker answered with %+v", got)
	}
	if n := h.StreamLen(); n != 2 {
		t.Fatalf("stream holds %d entries, want the text and the sticker", n)
	}
	if n := h.Chat.CountEvent("01EVSTICKER"); n != 0 {
		t.Fatalf("chat-mio was asked about a sticker %d times", n)
	}
	assertClean(t, h)
}

// loadingAtOnce starts the loading animation as each message arrives, for tests that look for it
// without a slow answer.
func loadingAtOnce(c *service.Config) { c.Line.LoadingAfter = 0 }

// TestLoadingAnimationOnlyForSlowAnswers: by default the animation waits a second for the
// answer, and an answer that comes within line.loading_after comes without it (the delay is
// 10 s here, the most it may be, so that a slow machine cannot make the answer late).
func TestLoadingAnimationOnlyForSlowAnswers(t *testing.T) {
	if got := service.DefaultConfig().Line.LoadingAfter; got != time.Second {
		t.Fatalf("line.loading_after defaults to %s, want 1s", got)
	}
	h := start(t, func(c *service.Config) { c.Line.LoadingAfter = 10 * time.Second })
	h.ask(t, "01EVFAST", "やあ")
	if got := h.line.Loading(); len(got) != 0 {
		t.Fatalf("loading animation for %v, though the answer took less than 10 s", got)
	}
}

// TestReplyTokenAndPushFallback: a quick answer uses the reply token (with the loading
// animation first, as the animation is set to start at once); a late answer and a redelivered event are pushed with the event's stable
// retry key; a 5xx is retried with the same key and a 409 counts as delivered.
func TestReplyTokenAndPushFallback(t *testing.T) {
	h := start(t, loadingAtOnce)
	t.Run("quick answer uses the reply token", func(t *testing.T) {
		h.ask(t, "01EVQUICK", "やあ")
		if !contains(h.line.Loading(), allowed) {
			t.Error("no loading animation in the 1:1 chat")
		}
		req := h.Chat.Requests()[0]
		if req.GetSessionId() != "line:"+allowed || req.GetChannel() != "line" || req.GetUserId() != allowed || req.GetIsGroup() {
			t.Errorf("chat request %+v", req)
		}
	})
	t.Run("redelivered event is pushed", func(t *testing.T) {
		tok := "rt-01EVREDELIVERED-" + allowed
		h.line.IssueReplyToken(tok)
		h.post(t, testSecret, fakeline.Body(fakeline.TextEvent("01EVREDELIVERED", allowed, "", tok, "再送", nowMillis(), true)))
		channeltest.WaitFor(t, "push", func() bool { return hasSent(h.line, "push", "", domain.RetryKey("event:01EVREDELIVERED")) })
		if hasSent(h.line, "reply", tok, "") {
			t.Error("reply token used for a redelivered event")
		}
	})
	t.Run("5xx retried with the same key, 409 is success", func(t *testing.T) {
		// The first push is accepted but its answer is a 500; the retry then gets 409.
		h.line.FailPushes(2, http.StatusInternalServerError, true)
		old := time.Now().Add(-5 * time.Second).UnixMilli()
		h.post(t, testSecret, fakeline.Body(fakeline.TextEvent("01EV5XX", allowed, "", "", "古い", old, false)))
		key := domain.RetryKey("event:01EV5XX")
		channeltest.WaitFor(t, "acknowledged", func() bool { return h.Chat.CountEvent("01EV5XX") == 1 && h.Pending() == 0 })
		var attempts int
		for _, k := range h.line.PushKeys() {
			if k == key {
				attempts++
			}
		}
		if attempts != 3 { // 500 (accepted), 500, then 409 — all with one key
			t.Errorf("push attempts with the event's key = %d, want 3", attempts)
		}
		delivered := 0
		for _, s := range h.line.Sent() {
			if s.RetryKey == key {
				delivered++
			}
		}
		if delivered != 1 {
			t.Errorf("delivered %d times", delivered)
		}
	})
	t.Run("late answer is pushed", func(t *testing.T) {
		// The reply token is judged when the answer is ready, not when the event arrived.
		h := start(t, func(c *service.Config) { c.Line.ReplyTokenMargin = time.Second })
		tok := "rt-01EVLATE-" + allowed2
		h.line.IssueReplyToken(tok)
		h.post(t, testSecret, fakeline.Body(fakeline.TextEvent("01EVLATE", allowed2, "", tok, "slow:1300", nowMillis(), false)))
		key := domain.RetryKey("event:01EVLATE")
		channeltest.WaitFor(t, "push", func() bool { return hasSent(h.line, "push", "", key) })
		if hasSent(h.line, "reply", tok, "") {
			t.Error("expired reply token was used")
		}
	})
	assertClean(t, h)
}

// TestApprovalButtonsAndPostback: an approval request is shown with a confirm template whose
// postback data fits LINE's 300 bytes, plus the typed commands; pressing a button reaches
// chat-mio as a structured action.
func TestApprovalButtonsAndPostback(t *testing.T) {
	h := start(t, nil)
	h.ask(t, "01EVAPPROVE", "approve")
	msgs := h.line.Sent()[0].Messages
	if len(msgs) != 2 || msgs[0].Type != "text" || msgs[1].Type != "template" {
		t.Fatalf("messages %+v", msgs)
	}
	job := "job_20261121_001"
	for _, c := range []string{"/approve " + job, "/deny " + job} {
		if !strings.Contains(msgs[0].Text, c) {
			t.Errorf("text lacks %q: %q", c, msgs[0].Text)
		}
	}
	acts := msgs[1].Template.Actions
	if acts[0].DisplayText != "/approve "+job || acts[1].DisplayText != "/deny "+job {
		t.Errorf("actions %+v", acts)
	}
	// The user presses "approve": LINE posts the button's data back.
	tok2 := "rt-01EVPOSTBACK-" + allowed
	h.line.IssueReplyToken(tok2)
	h.post(t, testSecret, fakeline.Body(fakeline.PostbackEvent("01EVPOSTBACK", allowed, tok2, acts[0].Data, nowMillis())))
	channeltest.WaitFor(t, "postback answer", func() bool { return hasSent(h.line, "reply", tok2, "") })
	var got *commonv1.Action
	for _, r := range h.Chat.Requests() {
		if r.GetEventId() == "01EVPOSTBACK" {
			got = r.GetAction()
		}
	}
	if got == nil || got.GetKind() != commonv1.ActionKind_ACTION_KIND_APPROVE || got.GetJobId() != job {
		t.Fatalf("chat-mio got action %+v", got)
	}
	// The gateway allocated the message's JobID; the press continues the request's trace with
	// the pressed job's id.
	reqTrace, reqJob := h.Chat.TraceOf(t, "01EVAPPROVE")
	pressTrace, pressJob := h.Chat.TraceOf(t, "01EVPOSTBACK")
	if !jobid.Valid(reqJob) || pressJob != job || pressTrace != reqTrace {
		t.Fatalf("request trace %s job %q; press trace %s job %q (want %s)", reqTrace, reqJob, pressTrace, pressJob, job)
	}
	if len(acts[0].Data) > 300 {
		t.Errorf("postback data is %d bytes", len(acts[0].Data))
	}
	assertClean(t, h)
}

// TestAllowlistGroupsAndFollow: a stranger gets a polite refusal and nothing else; in a group
// only a message that mentions the bot is answered, with no loading animation; follow is
// welcomed, unfollow only logged.
func TestAllowlistGroupsAndFollow(t *testing.T) {
	h := start(t, loadingAtOnce)
	stranger := "Ustranger0000000000000000000000x"
	h.post(t, testSecret, fakeline.Body(
		fakeline.TextEvent("01EVSTRANGER", stranger, "", "", "こんにちは", nowMillis(), false),
		fakeline.MentionBot(fakeline.TextEvent("01EVGROUP", allowed, "Cgroup0001", "", "グループから", nowMillis(), false)),
		fakeline.TextEvent("01EVCHATTER", allowed, "Cgroup0001", "", "メンションなし", nowMillis(), false),
		fakeline.Event{"type": "follow", "mode": "active", "timestamp": nowMillis(), "webhookEventId": "01EVFOLLOW",
			"deliveryContext": map[string]any{"isRedelivery": false}, "source": map[string]any{"type": "user", "userId": allowed2},
			"follow": map[string]any{"isUnblocked": false}},
		fakeline.Event{"type": "unfollow", "mode": "active", "timestamp": nowMillis(), "webhookEventId": "01EVUNFOLLOW",
			"deliveryContext": map[string]any{"isRedelivery": false}, "source": map[string]any{"type": "user", "userId": "Ugone"}},
	))
	channeltest.WaitFor(t, "all processed", func() bool { return h.StreamLen() == 4 && h.Pending() == 0 })
	refusal := h.sentTo(stranger)
	if len(refusal) != 1 || !strings.Contains(refusal[0].Messages[0].Text, "登録されたユーザー") {
		t.Fatalf("stranger got %+v", refusal)
	}
	if h.Chat.CountEvent("01EVSTRANGER") != 0 {
		t.Fatal("a stranger's message reached chat-mio")
	}
	if h.Chat.CountEvent("01EVCHATTER") != 0 || !strings.Contains(h.Logs.String(), "line.group_message_ignored") {
		t.Fatal("a group message that does not mention the bot was handled")
	}
	group := h.sentTo("Cgroup0001")
	if len(group) != 1 || group[0].Messages[0].Text != "echo: グループから" {
		t.Fatalf("group got %+v", group)
	}
	for _, r := range h.Chat.Requests() {
		if r.GetEventId() == "01EVGROUP" && (r.GetSessionId() != "line:Cgroup0001" || !r.GetIsGroup()) {
			t.Errorf("group request %+v", r)
		}
	}
	if contains(h.line.Loading(), "Cgroup0001") {
		t.Error("loading animation in a group")
	}
	if w := h.sentTo(allowed2); len(w) != 1 || !strings.Contains(w[0].Messages[0].Text, "友だち追加") {
		t.Errorf("follow got %+v", w)
	}
	if len(h.sentTo("Ugone")) != 0 {
		t.Error("unfollow was answered")
	}
	if !strings.Contains(h.Logs.String(), "line.unfollow") {
		t.Error("unfollow not logged")
	}
	assertClean(t, h)
}

// TestChatOrderingAndFailures: one chat's messages are answered in order even when the first
// is slow; chat-mio failures are retried, and a message that cannot be handled is answered
// with an apology instead of silence.
func TestChatOrderingAndFailures(t *testing.T) {
	h := start(t, nil)
	old := time.Now().Add(-10 * time.Second).UnixMilli() // push path, so order is visible in one list
	h.post(t, testSecret, fakeline.Body(
		fakeline.TextEvent("01EVORD1", allowed, "", "", "slow:400", old, false),
		fakeline.TextEvent("01EVORD2", allowed, "", "", "second", old, false),
		fakeline.TextEvent("01EVFLAKY", allowed2, "", "", "fail:1", old, false),
		fakeline.TextEvent("01EVBAD", allowed2, "", "", "invalid", old, false),
	))
	channeltest.WaitFor(t, "all processed", func() bool { return h.Pending() == 0 && len(h.sentTo(allowed)) == 2 && len(h.sentTo(allowed2)) == 2 })
	first := h.sentTo(allowed)
	if first[0].Messages[0].Text != "echo: slow:400" || first[1].Messages[0].Text != "echo: second" {
		t.Fatalf("order: %q then %q", first[0].Messages[0].Text, first[1].Messages[0].Text)
	}
	second := h.sentTo(allowed2)
	if second[0].Messages[0].Text != "echo: fail:1" || !strings.Contains(second[1].Messages[0].Text, "処理できませんでした") {
		t.Fatalf("failures answered with %+v", second)
	}
	if n := h.Chat.CountEvent("01EVFLAKY"); n != 2 {
		t.Errorf("flaky event tried %d times", n)
	}
	if n := h.Chat.CountEvent("01EVBAD"); n != 1 {
		t.Errorf("permanently failing event tried %d times", n)
	}
	if n := h.Redis.Client.XLen(context.Background(), h.Stream+":dead").Val(); n != 1 {
		t.Errorf("dead letters: %d", n)
	}
	assertClean(t, h)
}

// TestNotificationPush: NotificationService.Push over Connect and gRPC delivers to the session
// with a retry key that stays the same, so a repeated call is delivered once.
func TestNotificationPush(t *testing.T) {
	h := start(t, nil)
	channeltest.CheckPushOnce(t, h.Internal, svcauth.GatewayLine, func(string) string { return "line:" + allowed }, "slack:C1:1.2",
		func(protocol string) int {
			key, n := domain.RetryKey("notify:result-"+protocol), 0
			for _, s := range h.line.Sent() {
				if s.RetryKey == key {
					n++
				}
			}
			return n
		}, func() bool { return h.Pending() == 0 })
	assertClean(t, h)
}

func TestConfigValidate(t *testing.T) {
	type c = channeltest.ConfigCase[service.Config]
	channeltest.CheckValidate(t, func() service.Config {
		cfg := service.DefaultConfig()
		cfg.Line.ChannelSecret, cfg.Line.ChannelAccessToken = testSecret, testToken
		return cfg
	}, (*service.Config).Validate, []c{
		{Name: "missing channel secret", Mutate: func(c *service.Config) { c.Line.ChannelSecret = "" }, Key: "line.channel_secret"},
		{Name: "missing access token", Mutate: func(c *service.Config) { c.Line.ChannelAccessToken = "" }, Key: "line.channel_access_token"},
		{Name: "margin of a minute", Mutate: func(c *service.Config) { c.Line.ReplyTokenMargin = time.Minute }, Key: "line.reply_token_margin"},
		{Name: "bad base url", Mutate: func(c *service.Config) { c.Line.APIBaseURL = "api.line.me" }, Key: "line.api_base_url"},
		{Name: "loading too long", Mutate: func(c *service.Config) { c.Line.LoadingSeconds = 90 }, Key: "line.loading_seconds"},
		{Name: "loading delay negative", Mutate: func(c *service.Config) { c.Line.LoadingAfter = -time.Second }, Key: "line.loading_after"},
		{Name: "loading delay too long", Mutate: func(c *service.Config) { c.Line.LoadingAfter = time.Minute }, Key: "line.loading_after"},
		{Name: "public base over http", Mutate: func(c *service.Config) { c.Line.PublicBaseURL = "http://bot.example.com" }, Key: "line.public_base_url"},
		{Name: "media ttl too long", Mutate: func(c *service.Config) { c.Line.MediaTTL = 30 * 24 * time.Hour }, Key: "line.media_ttl"},
		{Name: "malformed approver tokens", Mutate: func(c *service.Config) { c.Line.ApproverTokens = "ops-without-a-name" }, Key: "line.approver_tokens"},
		{Name: "placeholder approver token", Mutate: func(c *service.Config) { c.Line.ApproverTokens = "admin:replace-with-a-long-random-token" },
			Key: "line.approver_tokens"},
	})
}

func hasSent(s *fakeline.Server, kind, replyToken, retryKey string) bool {
	for _, x := range s.Sent() {
		if x.Kind == kind && (replyToken == "" || x.ReplyToken == replyToken) && (retryKey == "" || x.RetryKey == retryKey) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// assertClean checks that LINE saw no request breaking its limits and no secret reached the log.
func assertClean(t *testing.T, h *harness) {
	t.Helper()
	channeltest.AssertClean(t, "LINE", h.line.Problems(), h.Logs.String(), testSecret, testToken)
}

// TestExampleConfig: the suite's example file parses into this service's config and shows the
// defaults; secrets come from the environment only.
func TestExampleConfig(t *testing.T) {
	const secret, token = "from-env-0123456789abcdefghijklmnop", "token-from-env-0123456789abcdefghijk"
	channeltest.CheckExampleConfig(t, channeltest.ExampleConfig[service.Config]{
		Path: "../../../config/picoclaw.example.yaml", Default: service.DefaultConfig, Validate: (*service.Config).Validate,
		Section:  func(c *service.Config) any { return c.Line },
		Settings: func(c *service.Config) *channel.Settings { return &c.Line.Settings },
		Env: map[string]string{"LINE_CHANNEL_SECRET": secret, "LINE_CHANNEL_ACCESS_TOKEN": token,
			"PICOCLAW_LINE_ALLOWED_USERS": "U1, U2", "PICOCLAW_LINE_REPLY_TOKEN_MARGIN": "40s"},
		Applied: func(c *service.Config) bool {
			return c.Line.ChannelSecret.Value() == secret && len(c.Line.AllowedUsers) == 2 && c.Line.ReplyTokenMargin == 40*time.Second
		},
		Secrets: []string{secret, token},
	})
}

// TestEmptyAllowlistMeansNobody: without allowed users the gateway warns at start and refuses
// everyone politely.
func TestEmptyAllowlistMeansNobody(t *testing.T) {
	h := start(t, func(c *service.Config) { c.Line.AllowedUsers = nil })
	if !strings.Contains(h.Logs.String(), "line.allowlist_empty") {
		t.Fatal("no start-up warning for the empty allowlist")
	}
	h.post(t, testSecret, fakeline.Body(fakeline.TextEvent("01EVNOBODY", allowed, "", "", "やあ", nowMillis(), false)))
	channeltest.WaitFor(t, "refusal", func() bool { return len(h.sentTo(allowed)) == 1 })
	if !strings.Contains(h.sentTo(allowed)[0].Messages[0].Text, "登録されたユーザー") || len(h.Chat.Requests()) != 0 {
		t.Fatalf("sent %+v, chat calls %d", h.sentTo(allowed), len(h.Chat.Requests()))
	}
}
