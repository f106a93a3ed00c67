package service_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
)

// TestOutageDelaysButNeverLoses: while the Web API is down — 500s, 429s with Retry-After,
// dropped connections, posts made whose answer is lost — answers and a pushed result wait in the
// outbox. Once Slack is back each is posted exactly once (a post whose answer was lost is found
// by its send key, not posted again), in each thread's order: no dead letter, no apology,
// chat-mio asked once per message, the push answered at once.
func TestOutageDelaysButNeverLoses(t *testing.T) {
	h := start(t, nil)
	h.slack.Outage(-1, fakeslack.Fault{Status: http.StatusInternalServerError}, fakeslack.Fault{Reset: true},
		fakeslack.Fault{Status: http.StatusTooManyRequests}, fakeslack.Fault{Status: http.StatusServiceUnavailable, Accept: true})
	threads := []string{"1700000500.000100", "1700000500.000200"}
	const perThread = 5
	var ids []string
	for i := range perThread {
		for c, thread := range threads {
			id := fmt.Sprintf("EvOut%d%d", c, i)
			ids = append(ids, id)
			ts := fmt.Sprintf("1700000501.%06d", c*100+i)
			if code, _ := h.event(t, fakeslack.EventBody(id, fakeslack.Mention(allowed, "C600", ts, thread, fmt.Sprintf("m%d-%d", c, i))), nil); code != http.StatusOK {
				t.Fatalf("event %s: %d", id, code)
			}
		}
	}
	push := gatewayv1connect.NewNotificationServiceClient(rpcserver.NewHTTPClient(), h.Internal, testinfra.AsSuite(t, svcauth.GatewaySlack))
	res, err := push.Push(context.Background(), &gatewayv1.PushRequest{SessionId: "slack:C600:" + threads[0], JobId: "job_20261121_043",
		RetryKey: "job_20261121_043:result", Messages: []*commonv1.ReplyMessage{{Text: "job_20261121_043 done"}}})
	if err != nil || res.GetDelivered() != 1 {
		t.Fatalf("push during the outage: %v %v", res, err)
	}
	channeltest.WaitFor(t, "sends tried during the outage", func() bool { return h.slack.Failed() >= 12 })
	if n := h.deadLetters(); n != 0 {
		t.Fatalf("%d dead letters during the outage", n)
	}
	h.slack.Up()
	channeltest.WaitFor(t, "every answer and the push posted", func() bool {
		return h.Pending() == 0 && len(h.postsIn("C600", threads[0])) >= perThread+1 && len(h.postsIn("C600", threads[1])) >= perThread
	})
	for c, thread := range threads {
		var answers, want []string
		for _, p := range h.postsIn("C600", thread) {
			switch {
			case strings.HasPrefix(p.Text, "echo: "):
				answers = append(answers, p.Text)
			case p.Text != "job_20261121_043 done":
				t.Errorf("thread %s got %q (an apology for a transient failure?)", thread, p.Text)
			}
		}
		for i := range perThread {
			want = append(want, fmt.Sprintf("echo: m%d-%d", c, i))
		}
		if strings.Join(answers, "|") != strings.Join(want, "|") {
			t.Errorf("thread %s answers %q, want each once in order %q", thread, answers, want)
		}
	}
	results := 0
	for _, p := range h.postsIn("C600", threads[0]) {
		if p.Text == "job_20261121_043 done" {
			results++
		}
	}
	if results != 1 {
		t.Errorf("pushed result posted %d times", results)
	}
	for _, id := range ids {
		if n := h.Chat.CountEvent(id); n != 1 {
			t.Errorf("chat-mio asked %d times for %s", n, id)
		}
	}
	if n := h.deadLetters(); n != 0 {
		t.Fatalf("%d dead letters", n)
	}
	assertClean(t, h)
}

// deadLetters counts the dead letters of the inbox and the outbox.
func (h *harness) deadLetters() int64 {
	ctx := context.Background()
	return h.Redis.Client.XLen(ctx, h.Stream+":dead").Val() + h.Redis.Client.XLen(ctx, h.Outbox+":dead").Val()
}
