package service_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

// TestKilledAfterAckAnsweredExactlyOnce starts the real gateway binary, lets it acknowledge a
// webhook (200) and start working, kills it with SIGKILL before any reply went out, and starts
// the binary again (under another consumer name, as after moving hosts): every event is
// answered exactly once, in order per chat.
func TestKilledAfterAckAnsweredExactlyOnce(t *testing.T) {
	line := fakeline.NewServer(testToken)
	defer line.Close()
	b := channeltest.PrepareBinary(t, "..", "line", service.Name,
		"PICOCLAW_LINE_API_BASE_URL="+line.URL,
		"PICOCLAW_LINE_ALLOWED_USERS="+allowed+","+allowed2,
		"PICOCLAW_LINE_INBOX_BLOCK=100ms",
		"PICOCLAW_LINE_INBOX_CLAIM_IDLE=1s",
		"LINE_CHANNEL_SECRET="+testSecret,
		"LINE_CHANNEL_ACCESS_TOKEN="+testToken,
	)
	chat := b.Chat
	first := b.Start(t, "PICOCLAW_LINE_INBOX_CONSUMER=host-a")

	now := nowMillis()
	events := []fakeline.Event{
		fakeline.TextEvent("01EVKILL1", allowed, "", "rt-kill1", "block", now, false),
		fakeline.TextEvent("01EVKILL2", allowed, "", "rt-kill2", "after the first", now, false),
		fakeline.TextEvent("01EVKILL3", allowed2, "", "rt-kill3", "block", now, false),
	}
	for _, tok := range []string{"rt-kill1", "rt-kill2", "rt-kill3"} {
		line.IssueReplyToken(tok)
	}
	res, err := fakeline.Post(http.DefaultClient, "http://"+b.Addr+service.WebhookPath, testSecret, fakeline.Body(events...))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("webhook: %d", res.StatusCode)
	}
	// Both chats are in chat-mio's hands; nothing has been answered yet.
	channeltest.WaitStarted(t, chat, 2)
	channeltest.Kill(t, first)
	if n := len(line.Sent()); n != 0 {
		t.Fatalf("%d answers before the crash", n)
	}
	close(chat.Release) // chat-mio answers from now on

	b.Start(t, "PICOCLAW_LINE_INBOX_CONSUMER=host-b")
	b.WaitSettled(t, "every event answered and acknowledged", func() bool { return len(line.Sent()) == 3 })
	time.Sleep(300 * time.Millisecond) // room for a duplicate to show up
	sent := line.Sent()
	if len(sent) != 3 {
		t.Fatalf("%d answers for 3 events", len(sent))
	}
	var order []string
	for _, s := range sent {
		if s.Kind != "push" {
			t.Errorf("redelivered event answered with %s", s.Kind)
		}
		if s.To == allowed {
			order = append(order, s.Messages[0].Text)
		}
	}
	for _, id := range []string{"01EVKILL1", "01EVKILL2", "01EVKILL3"} {
		if !hasSent(line, "push", "", domain.RetryKey("event:"+id)) {
			t.Errorf("event %s not answered with its retry key", id)
		}
	}
	if len(order) != 2 || order[0] != "echo: block" || order[1] != "echo: after the first" {
		t.Errorf("chat order %v", order)
	}
	if p := line.Problems(); len(p) > 0 {
		t.Errorf("LINE API rule violations: %v", p)
	}
}
