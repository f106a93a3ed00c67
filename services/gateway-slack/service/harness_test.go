package service_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink/chatlinktest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/slacktest"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/service"
)

const (
	testSecret = "test-signing-secret-0123456789abcdef"
	testToken  = "xoxb-test-bot-token-abcdefghijklmnop"
	allowed    = "UALLOWED01"
	allowed2   = "UALLOWED02"
)

type harness struct {
	cfg service.Config
	url string
	// internal is the internal listener (notification API, metrics); url is the public one.
	internal string
	slack    *slacktest.Server
	chat     *chatlinktest.FakeChat
	redis    testinfra.RedisDB
	logs     *chatlinktest.SyncBuffer
	stream   string
}

func start(t testing.TB, mutate func(*service.Config)) *harness {
	t.Helper()
	r := testinfra.Redis(t)
	api := slacktest.NewServer(testToken)
	t.Cleanup(api.Close)
	chat := chatlinktest.NewFakeChat()
	chatSrv := chatlinktest.Start(t, chat)
	cfg := service.DefaultConfig()
	cfg.Auth = testinfra.Auth(service.Name)
	cfg.Redis.Addr = r.Addr
	cfg.Redis.KeyPrefix = r.Prefix
	cfg.Services.ChatMio.URL = chatSrv.URL
	cfg.Slack.APIBaseURL = api.APIURL()
	cfg.Slack.AllowedUsers = []string{allowed, allowed2}
	cfg.Slack.SigningSecret = testSecret
	cfg.Slack.BotToken = testToken
	cfg.Slack.ChatTimeout = 10 * time.Second
	cfg.Slack.Inbox.Consumer = "test"
	cfg.Slack.Inbox.Block = 100 * time.Millisecond
	cfg.Slack.Inbox.MaxAttempts = 3
	logs := &chatlinktest.SyncBuffer{}
	cfg.LogWriter = logs
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listener, cfg.PublicListener = ln, pub
	if mutate != nil {
		mutate(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- service.Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("service.Run: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("gateway did not stop")
		}
		close(chat.Release)
	})
	h := &harness{cfg: cfg, url: "http://" + pub.Addr().String(), internal: "http://" + ln.Addr().String(), slack: api, chat: chat, redis: r, logs: logs,
		stream: r.Prefix + "inbox:slack"}
	waitFor(t, "gateway ready", func() bool {
		res, err := http.Get(h.url + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	return h
}

// event posts a signed Events API body.
func (h *harness) event(t testing.TB, body []byte, mutate func(*slacktest.Request)) (int, string) {
	t.Helper()
	r := slacktest.Request{URL: h.url + service.EventsPath, Secret: testSecret, Body: body, ContentType: "application/json"}
	if mutate != nil {
		mutate(&r)
	}
	code, text, err := slacktest.Do(http.DefaultClient, r)
	if err != nil {
		t.Fatal(err)
	}
	return code, text
}

// interact posts a signed interactivity body.
func (h *harness) interact(t testing.TB, body []byte) int {
	t.Helper()
	code, _, err := slacktest.Do(http.DefaultClient, slacktest.Request{URL: h.url + service.InteractivePath, Secret: testSecret,
		Body: body, ContentType: "application/x-www-form-urlencoded"})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

func (h *harness) postsIn(channel, thread string) []slacktest.Post {
	var out []slacktest.Post
	for _, p := range h.slack.Posts() {
		if p.Method == "chat.postMessage" && p.Channel == channel && p.ThreadTS == thread {
			out = append(out, p)
		}
	}
	return out
}

func (h *harness) streamLen(t testing.TB) int64 {
	t.Helper()
	return h.redis.Client.XLen(context.Background(), h.stream).Val()
}

func (h *harness) pending(t testing.TB) int64 {
	t.Helper()
	return h.redis.Client.XPending(context.Background(), h.stream, service.Name).Val().Count
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
