package service_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/service"
)

const (
	testSecret = "test-signing-secret-0123456789abcdef"
	testToken  = "xoxb-test-bot-token-abcdefghijklmnop"
	allowed    = "UALLOWED01"
	allowed2   = "UALLOWED02"
)

type harness struct {
	*channeltest.Gateway
	slack *fakeslack.Server
}

func start(t testing.TB, mutate func(*service.Config)) *harness {
	t.Helper()
	api := fakeslack.NewServer(testToken)
	t.Cleanup(api.Close)
	h := &harness{slack: api}
	h.Gateway = channeltest.Start(t, "slack", service.Name, func(ctx context.Context, g *channeltest.Gateway) error {
		cfg := service.DefaultConfig()
		g.Configure(service.Name, &cfg.Common, &cfg.Slack.Settings, &cfg.Wiring, api.APIURL(), allowed, allowed2)
		cfg.Slack.SigningSecret = testSecret
		cfg.Slack.BotToken = testToken
		cfg.Slack.FilesBaseURL = api.URL
		if mutate != nil {
			mutate(&cfg)
		}
		return service.Run(ctx, cfg)
	})
	return h
}

// event posts a signed Events API body.
func (h *harness) event(t testing.TB, body []byte, mutate func(*fakeslack.Request)) (int, string) {
	t.Helper()
	r := fakeslack.Request{URL: h.URL + service.EventsPath, Secret: testSecret, Body: body, ContentType: "application/json"}
	if mutate != nil {
		mutate(&r)
	}
	code, text, err := fakeslack.Do(http.DefaultClient, r)
	if err != nil {
		t.Fatal(err)
	}
	return code, text
}

// interact posts a signed interactivity body.
func (h *harness) interact(t testing.TB, body []byte) int {
	t.Helper()
	code, _, err := fakeslack.Do(http.DefaultClient, fakeslack.Request{URL: h.URL + service.InteractivePath, Secret: testSecret,
		Body: body, ContentType: "application/x-www-form-urlencoded"})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

func (h *harness) postsIn(channel, thread string) []fakeslack.Post {
	var out []fakeslack.Post
	for _, p := range h.slack.Posts() {
		if p.Method == "chat.postMessage" && p.Channel == channel && p.ThreadTS == thread {
			out = append(out, p)
		}
	}
	return out
}
