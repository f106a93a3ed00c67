package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

// TestOutageDelaysButNeverLoses: while the Messaging API is down — 500s, 429s with Retry-After,
// dropped connections, pushes accepted whose answer is lost — answers and a pushed result wait in
// the outbox. Once LINE is back every one is delivered exactly once, in each chat's order: no
// dead letter, no apology, chat-mio asked once per message, and the push answered at once.
func TestOutageDelaysButNeverLoses(t *testing.T) {
	h := start(t, nil)
	h.line.Outage(-1, fakeline.Fault{Status: http.StatusInternalServerError}, fakeline.Fault{Reset: true},
		fakeline.Fault{Status: http.StatusTooManyRequests}, fakeline.Fault{Status: http.StatusServiceUnavailable, Accept: true})
	chats := []string{allowed, allowed2}
	const perChat = 6
	var events []fakeline.Event
	for i := range perChat {
		for c, chat := range chats {
			id := fmt.Sprintf("01EVOUT%d%02d", c, i)
			tok := "rt-" + id + "-" + chat
			h.line.IssueReplyToken(tok) // young events try their reply token first
			events = append(events, fakeline.TextEvent(id, chat, "", tok, fmt.Sprintf("m%d-%d", c, i), nowMillis(), false))
		}
	}
	if code := h.post(t, testSecret, fakeline.Body(events...)); code != http.StatusOK {
		t.Fatalf("webhook %d", code)
	}
	push := gatewayv1connect.NewNotificationServiceClient(rpcserver.NewHTTPClient(), h.Internal, testinfra.AsSuite(t, svcauth.GatewayLine))
	res, err := push.Push(context.Background(), &gatewayv1.PushRequest{SessionId: "line:" + allowed, JobId: "job_20261121_042",
		RetryKey: "job_20261121_042:result", Messages: []*commonv1.ReplyMessage{{Text: "job_20261121_042 done"}}})
	if err != nil || res.GetDelivered() != 1 {
		t.Fatalf("push during the outage: %v %v", res, err)
	}
	// The sends at the head of each chat failed several times (each outbox attempt is a reply or
	// a push with LINE's own retries; the rest of a chat waits behind its head, in order); none
	// went to the dead letters meanwhile.
	channeltest.WaitFor(t, "sends tried during the outage", func() bool { return h.line.Failed() >= 16 })
	if n := h.deadLetters(t); n != 0 {
		t.Fatalf("%d dead letters during the outage", n)
	}
	h.line.Up()
	channeltest.WaitFor(t, "every answer and the push delivered", func() bool {
		return h.Pending() == 0 && len(h.sentTo(allowed)) >= perChat+1 && len(h.sentTo(allowed2)) >= perChat
	})
	for c, chat := range chats {
		var texts []string
		for _, s := range h.sentTo(chat) {
			for _, m := range s.Messages {
				texts = append(texts, m.Text)
			}
		}
		want := []string{}
		for i := range perChat {
			want = append(want, fmt.Sprintf("echo: m%d-%d", c, i))
		}
		var answers []string
		for _, x := range texts {
			if strings.HasPrefix(x, "echo: ") {
				answers = append(answers, x)
			} else if x != "job_20261121_042 done" {
				t.Errorf("chat %s got %q (an apology for a transient failure?)", chat, x)
			}
		}
		if strings.Join(answers, "|") != strings.Join(want, "|") {
			t.Errorf("chat %s answers %q, want each once in order %q", chat, answers, want)
		}
	}
	results := 0
	for _, s := range h.line.Sent() {
		if s.RetryKey == domain.RetryKey("notify:job_20261121_042:result") {
			results++
		}
	}
	if results != 1 {
		t.Errorf("pushed result delivered %d times", results)
	}
	for _, ev := range events {
		if n := h.Chat.CountEvent(ev["webhookEventId"].(string)); n != 1 {
			t.Errorf("chat-mio asked %d times for %s", n, ev["webhookEventId"])
		}
	}
	if n := h.deadLetters(t); n != 0 {
		t.Fatalf("%d dead letters", n)
	}
	assertClean(t, h)
}

// deadLetters counts the dead letters of the inbox and the outbox.
func (h *harness) deadLetters(t testing.TB) int64 {
	ctx := context.Background()
	return h.Redis.Client.XLen(ctx, h.Stream+":dead").Val() + h.Redis.Client.XLen(ctx, h.Outbox+":dead").Val()
}

const approverToken = "approver-token-0123456789abcdefghijklmn"

// TestRefusedSendIsDeadLetteredAndReplayed: a push LINE refuses (400) is not retried: it goes to
// the outbox's dead letters with why, and no apology is sent. Once the cause is fixed an approver
// replays it over the gateway's REST API — twice, and it is delivered once.
func TestRefusedSendIsDeadLetteredAndReplayed(t *testing.T) {
	h := start(t, func(c *service.Config) { c.Line.ApproverTokens = config.Secret("ops:" + approverToken) })
	h.line.Outage(1, fakeline.Fault{Status: http.StatusBadRequest})
	old := nowMillis() - 120_000 // no reply token: the answer is pushed
	h.post(t, testSecret, fakeline.Body(fakeline.TextEvent("01EVREFUSED", allowed, "", "", "refused", old, false)))
	channeltest.WaitFor(t, "the dead letter", func() bool { return h.deadLetters(t) == 1 && h.Pending() == 0 })
	call := func(method, path, token string, out any) int {
		t.Helper()
		req, _ := http.NewRequest(method, h.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if out != nil && res.StatusCode == http.StatusOK {
			if err := json.Unmarshal(b, out); err != nil {
				t.Fatal(err, string(b))
			}
		}
		return res.StatusCode
	}
	if code := call(http.MethodGet, channel.DeadLettersPath, "", nil); code != http.StatusUnauthorized {
		t.Fatalf("without a token: %d", code)
	}
	if code := call(http.MethodGet, channel.DeadLettersPath, "someone-else-0123456789abcdefghijklmn", nil); code != http.StatusForbidden {
		t.Fatalf("with another token: %d", code)
	}
	var list channel.DeadLetterList
	if code := call(http.MethodGet, channel.DeadLettersPath, approverToken, &list); code != http.StatusOK || len(list.DeadLetters) != 1 {
		t.Fatalf("list: %d %+v", code, list)
	}
	dl := list.DeadLetters[0]
	if dl.Queue != channel.QueueOutbox || dl.Channel != "line" || dl.Kind != "permanent" || dl.EventID != "event:01EVREFUSED" ||
		!strings.Contains(dl.Reason, "400") || dl.Text != "echo: refused" || dl.Key != "line:"+allowed {
		t.Fatalf("dead letter %+v", dl)
	}
	if len(h.sentTo(allowed)) != 0 {
		t.Fatal("something was sent for a refused push (an apology?)")
	}
	for range 2 {
		var r channel.ReplayJSON
		if code := call(http.MethodPost, channel.DeadLettersPath+"/"+dl.ID+"/replay", approverToken, &r); code != http.StatusOK {
			t.Fatalf("replay: %d", code)
		}
	}
	channeltest.WaitFor(t, "the replayed answer", func() bool { return len(h.sentTo(allowed)) == 1 && h.Pending() == 0 })
	if got := h.sentTo(allowed); len(got) != 1 || got[0].RetryKey != domain.RetryKey("event:01EVREFUSED") {
		t.Fatalf("sent %+v", got)
	}
	if n := h.Chat.CountEvent("01EVREFUSED"); n != 1 {
		t.Fatalf("chat-mio asked %d times", n)
	}
}
