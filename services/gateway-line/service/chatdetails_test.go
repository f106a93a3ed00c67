package service_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

// pastReplyToken is an event time past the reply token's margin: answers are pushed to the chat.
func pastReplyToken() int64 { return time.Now().Add(-time.Minute).UnixMilli() }

const unsupportedJA = "読めるのは文章と画像"

// TestUnsupportedMessagesAnswered: a sticker, audio, a video, a file and a location — each in the
// shape of LINE's webhook schema — get the reply that says what is supported; chat-mio is not
// asked about any of them.
func TestUnsupportedMessagesAnswered(t *testing.T) {
	h := start(t, nil)
	types := []string{"sticker", "audio", "video", "file", "location"}
	var events []fakeline.Event
	for _, typ := range types {
		events = append(events, fakeline.MessageOf(typ, "01EV"+strings.ToUpper(typ), allowed, "", pastReplyToken()))
	}
	if got := h.post(t, testSecret, fakeline.Body(events...)); got != http.StatusOK {
		t.Fatalf("status %d", got)
	}
	channeltest.WaitFor(t, "the answers", func() bool { return len(h.sentTo(allowed)) == len(types) && h.Pending() == 0 })
	for i, s := range h.sentTo(allowed) {
		if len(s.Messages) != 1 || !strings.Contains(s.Messages[0].Text, unsupportedJA) {
			t.Errorf("%s answered with %+v", types[i], s)
		}
	}
	if n := len(h.Chat.Requests()); n != 0 {
		t.Fatalf("chat-mio was asked %d times", n)
	}
	assertClean(t, h)
}

// TestGroupMentionOnly: with line.group_mention_only (the default) a group's message is kept
// only when it mentions the bot — an image, a sticker or another file cannot carry a mention, so
// in such a group they are acknowledged and not stored, by design (README, "Groups"); with
// group_mention_only: false every group message is answered, text without a mention included.
func TestGroupMentionOnly(t *testing.T) {
	const group = "Cgroup0001"
	t.Run("mention only", func(t *testing.T) {
		h := start(t, nil)
		if got := h.post(t, testSecret, fakeline.Body(
			fakeline.TextEvent("01EVPLAIN", allowed, group, "", "メンションなし", pastReplyToken(), false),
			fakeline.MessageOf("sticker", "01EVGSTICKER", allowed, group, pastReplyToken()),
			withGroup(fakeline.ImageEvent("01EVGIMAGE", allowed, "", pastReplyToken()), allowed, group),
		)); got != http.StatusOK {
			t.Fatalf("status %d", got)
		}
		// Stored before the 200, or not at all.
		if n := h.StreamLen(); n != 0 {
			t.Fatalf("%d group events without a mention stored", n)
		}
		h.post(t, testSecret, fakeline.Body(fakeline.MentionBot(fakeline.TextEvent("01EVMENTION", allowed, group, "", "こんにちは", pastReplyToken(), false))))
		channeltest.WaitFor(t, "the mention's answer", func() bool { return len(h.sentTo(group)) == 1 && h.Pending() == 0 })
		if got := h.sentTo(group)[0].Messages[0].Text; got != "echo: こんにちは" {
			t.Fatalf("group got %q", got)
		}
		if len(h.line.Fetched()) != 0 {
			t.Error("an image nobody asked the bot about was fetched")
		}
		assertClean(t, h)
	})
	t.Run("every message", func(t *testing.T) {
		h := start(t, func(c *service.Config) { c.Line.GroupMentionOnly = false })
		h.post(t, testSecret, fakeline.Body(
			fakeline.TextEvent("01EVPLAIN", allowed, group, "", "メンションなし", pastReplyToken(), false),
			fakeline.MessageOf("sticker", "01EVGSTICKER", allowed, group, pastReplyToken()),
		))
		channeltest.WaitFor(t, "both answers", func() bool { return len(h.sentTo(group)) == 2 && h.Pending() == 0 })
		sent := h.sentTo(group)
		if got := sent[0].Messages[0].Text; got != "echo: メンションなし" {
			t.Errorf("text without a mention answered with %q", got)
		}
		if got := sent[1].Messages[0].Text; !strings.Contains(got, unsupportedJA) {
			t.Errorf("sticker answered with %q", got)
		}
		assertClean(t, h)
	})
}

// withGroup moves an event into a group.
func withGroup(e fakeline.Event, userID, group string) fakeline.Event {
	e["source"] = map[string]any{"type": "group", "groupId": group, "userId": userID}
	return e
}

// TestPriorityCommandsAheadOfBlockedTurn: while a turn of a chat is blocked in chat-mio,
// "/auto-approve off" and "/status" from the same chat — typed, or "@Mio …" in a group — are
// answered at once; the blocked turn is answered when it ends.
func TestPriorityCommandsAheadOfBlockedTurn(t *testing.T) {
	const group = "Cgroup0002"
	h := start(t, nil)
	h.post(t, testSecret, fakeline.Body(
		fakeline.TextEvent("01EVBLOCK", allowed, "", "", "block", pastReplyToken(), false),
		fakeline.MentionBot(fakeline.TextEvent("01EVGBLOCK", allowed, group, "", "block", pastReplyToken(), false)),
	))
	started := map[string]bool{}
	for len(started) < 2 {
		started[<-h.Chat.Started] = true
	}
	h.post(t, testSecret, fakeline.Body(
		fakeline.TextEvent("01EVOFF", allowed, "", "", "/auto-approve off", pastReplyToken(), false),
		fakeline.TextEvent("01EVSTATUS", allowed, "", "", "/status", pastReplyToken(), false),
		fakeline.MentionBot(fakeline.TextEvent("01EVGOFF", allowed, group, "", "/auto-approve off", pastReplyToken(), false)),
	))
	channeltest.WaitFor(t, "the commands' answers", func() bool { return len(h.sentTo(allowed)) == 2 && len(h.sentTo(group)) == 1 })
	if got := texts(h.sentTo(allowed)); !slices.Equal(got, []string{"echo: /auto-approve off", "echo: /status"}) {
		t.Fatalf("1:1 chat got %q while its turn was blocked", got)
	}
	if got := texts(h.sentTo(group)); !slices.Equal(got, []string{"echo: /auto-approve off"}) {
		t.Fatalf("group got %q while its turn was blocked", got)
	}
	h.Chat.Release <- struct{}{} // one for each blocked turn (the harness closes it at the end)
	h.Chat.Release <- struct{}{}
	channeltest.WaitFor(t, "the blocked turns' answers", func() bool { return len(h.sentTo(allowed)) == 3 && len(h.sentTo(group)) == 2 && h.Pending() == 0 })
	if got := texts(h.sentTo(allowed))[2]; got != "echo: block" {
		t.Fatalf("blocked turn answered %q", got)
	}
	assertClean(t, h)
}

func texts(sent []fakeline.Sent) []string {
	var out []string
	for _, s := range sent {
		for _, m := range s.Messages {
			out = append(out, m.Text)
		}
	}
	return out
}
