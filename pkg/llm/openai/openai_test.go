package openai

import (
	"context"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/internal/llmtest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
)

func testClient(t *testing.T, provider, url string) llm.Client {
	return llmtest.NewClient(t, New, provider, url, &llmtest.Sleeps{})
}

func TestOpenAICompatibleRequestShape(t *testing.T) {
	// The SDK's environment defaults must not leak in: base URL, key, org and project come
	// only from our config.
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/should-not-be-used")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	t.Setenv("OPENAI_PROJECT_ID", "proj-from-env")
	for _, provider := range []string{llm.ProviderOpenAI, llm.ProviderDeepSeek} {
		t.Run(provider, func(t *testing.T) {
			f := llmtest.NewFake(t, llmtest.Step{Status: 200, Body: llmtest.OpenAIOK})
			c := testClient(t, provider, f.Srv.URL)
			resp, err := c.Chat(context.Background(), llm.Request{
				Messages: []llm.Message{{Role: llm.RoleSystem, Content: "you write proposals"}, {Role: llm.RoleUser, Content: "task"}, {Role: llm.RoleAssistant, Content: "prev"}},
				JSON:     true, MaxTokens: 321,
			})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != `{"plan":"x"}` || resp.Usage != (llm.Usage{InputTokens: 30, OutputTokens: 12}) || resp.Provider != provider || resp.Attempts != 1 || !c.Cloud() {
				t.Fatalf("resp = %+v", resp)
			}
			r := f.Requests()
			if len(r) != 1 || r[0].Method != "POST" || r[0].Path != "/v1/chat/completions" {
				t.Fatalf("requests = %+v", r)
			}
			if got := r[0].Header.Get("Authorization"); got != "Bearer "+llmtest.TestOpenAIKey {
				t.Errorf("Authorization = %q", got)
			}
			for _, h := range []string{"OpenAI-Organization", "OpenAI-Project"} {
				if r[0].Header.Get(h) != "" {
					t.Errorf("%s header leaked from the environment", h)
				}
			}
			b := r[0].Body
			limit, other := "max_completion_tokens", "max_tokens"
			if provider == llm.ProviderDeepSeek {
				limit, other = other, limit
			}
			if _, both := b[other]; b["model"] != c.Model() || b[limit] != float64(321) || both {
				t.Errorf("body = %s", r[0].Raw)
			}
			if rf, _ := b["response_format"].(map[string]any); rf["type"] != "json_object" {
				t.Errorf("response_format = %v", b["response_format"])
			}
			msgs, _ := b["messages"].([]any)
			if len(msgs) != 3 || msgs[0].(map[string]any)["role"] != "system" || msgs[2].(map[string]any)["role"] != "assistant" {
				t.Errorf("messages = %v", msgs)
			}
		})
	}
}

func TestOpenAIToolCalls(t *testing.T) {
	for _, provider := range []string{llm.ProviderOpenAI, llm.ProviderDeepSeek} {
		t.Run(provider, func(t *testing.T) {
			newClient := func(url string) llm.Client { return testClient(t, provider, url) }
			llmtest.ToolRoundTrip(t, fakellm.OpenAI, newClient)
			llmtest.ToolLimitOnTheWire(t, fakellm.OpenAI, newClient)
		})
	}
}

func TestOpenAIImageParts(t *testing.T) {
	llmtest.ImageOnTheWire(t, fakellm.OpenAI, func(url string) llm.Client { return testClient(t, llm.ProviderOpenAI, url) })
}
