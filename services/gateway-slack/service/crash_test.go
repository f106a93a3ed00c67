package service_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/service"
)

// TestKilledAfterAckAnsweredExactlyOnce starts the real binary, lets it acknowledge two events
// and start on them, kills it with SIGKILL before it answered, and starts it again with the
// same consumer name: each event is answered exactly once.
func TestKilledAfterAckAnsweredExactlyOnce(t *testing.T) {
	api := fakeslack.NewServer(testToken)
	defer api.Close()
	b := channeltest.PrepareBinary(t, "..", "slack", service.Name,
		"PICOCLAW_SLACK_API_BASE_URL="+api.APIURL(),
		"PICOCLAW_SLACK_ALLOWED_USERS="+allowed+","+allowed2,
		"PICOCLAW_SLACK_INBOX_BLOCK=100ms",
		"PICOCLAW_SLACK_INBOX_CONSUMER=host-a",
		"SLACK_SIGNING_SECRET="+testSecret,
		"SLACK_BOT_TOKEN="+testToken,
	)
	chat := b.Chat
	first := b.Start(t)
	for i, user := range []string{allowed, allowed2} {
		body := fakeslack.EventBody(fmt.Sprint("EvKill", i), fakeslack.Mention(user, "CKILL", fmt.Sprintf("1700002000.00000%d", i), "", "block"))
		code, _, err := fakeslack.Do(http.DefaultClient, fakeslack.Request{URL: "http://" + b.Addr + service.EventsPath,
			Secret: testSecret, Body: body, ContentType: "application/json"})
		if err != nil || code != http.StatusOK {
			t.Fatalf("event %d: %d %v", i, code, err)
		}
	}
	channeltest.WaitStarted(t, chat, 2)
	channeltest.Kill(t, first)
	if n := len(api.Posts()); n != 0 {
		t.Fatalf("%d posts before the crash", n)
	}
	close(chat.Release)
	b.Start(t)
	b.WaitSettled(t, "both events answered and acknowledged", func() bool { return len(api.Posts()) == 2 })
	time.Sleep(300 * time.Millisecond)
	if n := len(api.Posts()); n != 2 {
		t.Fatalf("%d posts for 2 events", n)
	}
	threads := map[string]int{}
	for _, p := range api.Posts() {
		threads[p.ThreadTS]++
	}
	if threads["1700002000.000000"] != 1 || threads["1700002000.000001"] != 1 {
		t.Fatalf("answers per thread %v", threads)
	}
}
