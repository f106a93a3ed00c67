package service_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
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

func baseConfig(r testinfra.RedisDB, lineURL, chatURL string) service.Config {
	cfg := service.DefaultConfig()
	cfg.Auth = testinfra.Auth(service.Name)
	cfg.Redis.Addr = r.Addr
	cfg.Redis.KeyPrefix = r.Prefix
	cfg.Services.ChatMio.URL = chatURL
	cfg.Line.APIBaseURL = lineURL
	cfg.Line.AllowedUsers = []string{allowed, allowed2}
	cfg.Line.ChannelSecret = testSecret
	cfg.Line.ChannelAccessToken = testToken
	cfg.Line.ChatTimeout = 10 * time.Second
	cfg.Line.Inbox.Consumer = "test"
	cfg.Line.Inbox.Block = 100 * time.Millisecond
	cfg.Line.Inbox.MaxAttempts = 3
	return cfg
}

func start(t testing.TB, mutate func(*service.Config)) *harness {
	t.Helper()
	line := fakeline.NewServer(testToken)
	t.Cleanup(line.Close)
	h := &harness{line: line}
	h.Gateway = channeltest.Start(t, "line", service.Name, func(ctx context.Context, g *channeltest.Gateway) error {
		cfg := baseConfig(g.Redis, line.URL, g.ChatURL)
		cfg.LogWriter = g.Logs
		cfg.Listener, cfg.PublicListener = g.Listener, g.PublicListener
		if mutate != nil {
			mutate(&cfg)
		}
		return service.Run(ctx, cfg)
	})
	return h
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
