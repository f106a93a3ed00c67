package service_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

const (
	testSecret = "test-channel-secret-0123456789abcdef"
	testToken  = "test-channel-access-token-abcdefghijklmnop"
	allowed    = "Uallowed000000000000000000000001"
	allowed2   = "Uallowed000000000000000000000002"
)

type harness struct {
	*channeltest.Gateway
	line *fakeline.Server
}

func start(t testing.TB, mutate func(*service.Config)) *harness {
	t.Helper()
	line := fakeline.NewServer(testToken)
	t.Cleanup(line.Close)
	h := &harness{line: line}
	h.Gateway = channeltest.Start(t, "line", service.Name, func(ctx context.Context, g *channeltest.Gateway) error {
		cfg := service.DefaultConfig()
		g.Configure(service.Name, &cfg.Common, &cfg.Line.Settings, &cfg.Wiring, line.URL, allowed, allowed2)
		cfg.Line.ChannelSecret = testSecret
		cfg.Line.ChannelAccessToken = testToken
		cfg.Line.DataAPIBaseURL = line.URL
		if mutate != nil {
			mutate(&cfg)
		}
		return service.Run(ctx, cfg)
	})
	return h
}

// ask sends text from the allowed user as event id with a reply token of its own, waits for the
// reply that uses the token and returns it.
func (h *harness) ask(t testing.TB, id, text string) string {
	t.Helper()
	tok := "rt-" + id + "-" + allowed
	h.line.IssueReplyToken(tok)
	h.post(t, testSecret, fakeline.Body(fakeline.TextEvent(id, allowed, "", tok, text, nowMillis(), false)))
	channeltest.WaitFor(t, "the reply to "+id, func() bool { return hasSent(h.line, "reply", tok, "") })
	return tok
}

func (h *harness) post(t testing.TB, secret string, body []byte) int {
	t.Helper()
	res, err := fakeline.Post(http.DefaultClient, h.URL+service.WebhookPath, secret, body)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func (h *harness) sentTo(chatID string) []fakeline.Sent {
	var out []fakeline.Sent
	for _, s := range h.line.Sent() {
		if s.To == chatID || (s.Kind == "reply" && strings.Contains(s.ReplyToken, chatID)) {
			out = append(out, s)
		}
	}
	return out
}

func nowMillis() int64 { return time.Now().UnixMilli() }
