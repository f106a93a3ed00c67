package fakellm_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicopt "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	openaiopt "github.com/openai/openai-go/v3/option"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
)

// The fakes are driven by the providers' own SDKs: what they accept and answer is what the
// real clients send and parse.
func TestOpenAIWithTheSDK(t *testing.T) {
	f := fakellm.Start(t, fakellm.OpenAI, fakellm.Reply(`{"ok":true}`), fakellm.WithAPIKey("sk-test"))
	c := openai.NewClient(openaiopt.WithBaseURL(f.URL+"/v1"), openaiopt.WithAPIKey("sk-test"), openaiopt.WithMaxRetries(0))
	res, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("brief"), openai.UserMessage("job_20261127_001 please")},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONObject: &openai.ResponseFormatJSONObjectParam{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Choices[0].Message.Content != `{"ok":true}` || res.Usage.TotalTokens == 0 {
		t.Fatalf("answer %+v", res)
	}
	r := f.Requests()[0]
	if r.Model != "gpt-test" || r.System != "brief" || !r.JSON || !strings.Contains(r.Text(), "job_20261127_001") {
		t.Fatalf("request %+v", r)
	}
	bad := openai.NewClient(openaiopt.WithBaseURL(f.URL+"/v1"), openaiopt.WithAPIKey("wrong"), openaiopt.WithMaxRetries(0))
	_, err = bad.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized || apiErr.Code != "invalid_api_key" {
		t.Fatalf("wrong key: %v", err)
	}
}

func TestAnthropicWithTheSDK(t *testing.T) {
	f := fakellm.Start(t, fakellm.Anthropic, fakellm.Script(fakellm.Answer{Content: "hello"}, fakellm.Answer{Status: 529}),
		fakellm.WithAPIKey("ak-test"))
	c := anthropic.NewClient(anthropicopt.WithBaseURL(f.URL), anthropicopt.WithAPIKey("ak-test"), anthropicopt.WithMaxRetries(0))
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 100,
		System:   []anthropic.TextBlockParam{{Text: "brief"}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	msg, err := c.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != "hello" || msg.Usage.OutputTokens == 0 {
		t.Fatalf("answer %+v", msg)
	}
	if r := f.Requests()[0]; r.System != "brief" || r.Messages[0].Content != "hi" {
		t.Fatalf("request %+v", r)
	}
	_, err = c.Messages.New(context.Background(), params)
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 || !strings.Contains(apiErr.RawJSON(), "overloaded_error") {
		t.Fatalf("overloaded: %v", err)
	}
}

func TestOllamaChatStreamAndModels(t *testing.T) {
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("はい、Mio です。"), fakellm.WithModels("chat-v1", "worker-v1:latest"))
	post := func(path string, body any) *http.Response {
		b, _ := json.Marshal(body)
		res, err := http.Post(f.URL+path, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	// Non-streaming, JSON format.
	var one struct {
		Message       struct{ Role, Content string }
		Done          bool
		EvalCount     int `json:"eval_count"`
		PromptEvalCnt int `json:"prompt_eval_count"`
	}
	res := post("/api/chat", map[string]any{"model": "chat-v1", "stream": false, "format": "json",
		"messages": []map[string]any{{"role": "system", "content": "s"}, {"role": "user", "content": "u", "images": []string{"aGk="}}}})
	if err := json.NewDecoder(res.Body).Decode(&one); err != nil || !one.Done || one.Message.Content != "はい、Mio です。" || one.EvalCount == 0 {
		t.Fatalf("chat: %+v %v", one, err)
	}
	r := f.Requests()[0]
	if !r.JSON || r.Stream || r.System != "s" || len(r.Messages[1].Images) != 1 {
		t.Fatalf("request %+v", r)
	}
	// Streaming is Ollama's default: NDJSON chunks that add up to the answer.
	res = post("/api/chat", map[string]any{"model": "worker-v1", "messages": []map[string]any{{"role": "user", "content": "u"}}})
	var got strings.Builder
	sc := bufio.NewScanner(res.Body)
	done := false
	for sc.Scan() {
		var c struct {
			Message struct{ Content string }
			Done    bool
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		got.WriteString(c.Message.Content)
		done = c.Done
	}
	if got.String() != "はい、Mio です。" || !done {
		t.Fatalf("stream %q done=%v", got.String(), done)
	}
	// A model that is not installed is 404 with Ollama's error body.
	res = post("/api/chat", map[string]any{"model": "llama3", "messages": []map[string]any{{"role": "user", "content": "u"}}})
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("missing model: %d", res.StatusCode)
	}
	tags, err := http.Get(f.URL + "/api/tags")
	if err != nil {
		t.Fatal(err)
	}
	defer tags.Body.Close()
	var list struct{ Models []struct{ Name string } }
	if err := json.NewDecoder(tags.Body).Decode(&list); err != nil || len(list.Models) != 2 || list.Models[0].Name != "chat-v1:latest" {
		t.Fatalf("tags %+v %v", list, err)
	}
}

func TestOllamaShowReportsTheModelFile(t *testing.T) {
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply(""), fakellm.WithModels("chat-v1"),
		fakellm.WithParameters("num_ctx 8192"), fakellm.WithContextLength(16384))
	res, err := http.Post(f.URL+"/api/show", "application/json", strings.NewReader(`{"model":"chat-v1"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var show struct {
		Parameters string         `json:"parameters"`
		ModelInfo  map[string]any `json:"model_info"`
	}
	if err := json.NewDecoder(res.Body).Decode(&show); err != nil || show.Parameters != "num_ctx 8192" || show.ModelInfo["llama.context_length"] != 16384.0 {
		t.Fatalf("show %+v %v", show, err)
	}
}
