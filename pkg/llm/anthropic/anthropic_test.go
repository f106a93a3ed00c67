package anthropic

import (
	"context"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/internal/llmtest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
)

func testClient(t *testing.T, provider, url string) llm.Client {
	return llmtest.NewClient(t, New, provider, url, &llmtest.Sleeps{})
}

func TestAnthropicRequestShape(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1/should-not-be-used")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env-should-not-be-used")
	f := llmtest.NewFake(t, llmtest.Step{Status: 200, Body: llmtest.AnthropicOK})
	c := testClient(t, llm.ProviderAnthropic, f.Srv.URL)
	resp, err := c.Chat(context.Background(), llm.Request{
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: "you are Gin"}, {Role: llm.RoleUser, Content: "task"}},
		JSON:     true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"plan":"y"}` || resp.Usage != (llm.Usage{InputTokens: 40, OutputTokens: 9}) || resp.Provider != "anthropic" {
		t.Fatalf("resp = %+v", resp)
	}
	r := f.Requests()
	if len(r) != 1 || r[0].Path != "/v1/messages" {
		t.Fatalf("requests = %+v", r)
	}
	if r[0].Header.Get("x-api-key") != llmtest.TestAnthropicKey {
		t.Errorf("x-api-key = %q", r[0].Header.Get("x-api-key"))
	}
	if r[0].Header.Get("anthropic-version") == "" {
		t.Error("anthropic-version header missing")
	}
	if r[0].Header.Get("Authorization") != "" {
		t.Error("Authorization header must not be sent to Anthropic")
	}
	b := r[0].Body
	if b["model"] != "claude-sonnet-4-5" || b["max_tokens"] != float64(1000) {
		t.Errorf("body = %s", r[0].Raw)
	}
	sys, _ := b["system"].([]any)
	if len(sys) != 1 || !strings.Contains(sys[0].(map[string]any)["text"].(string), "you are Gin") || !strings.Contains(sys[0].(map[string]any)["text"].(string), "JSON") {
		t.Errorf("system = %v", b["system"])
	}
	msgs, _ := b["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "user" {
		t.Errorf("messages = %v", msgs)
	}
}

func TestAnthropicToolUse(t *testing.T) {
	newClient := func(url string) llm.Client { return testClient(t, llm.ProviderAnthropic, url) }
	llmtest.ToolRoundTrip(t, fakellm.Anthropic, newClient)
	llmtest.ToolLimitOnTheWire(t, fakellm.Anthropic, newClient)
}

func TestAnthropicImageBlocks(t *testing.T) {
	llmtest.ImageOnTheWire(t, fakellm.Anthropic, func(url string) llm.Client { return testClient(t, llm.ProviderAnthropic, url) })
}
