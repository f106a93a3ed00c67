package fakellm_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
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

var readFileTool = map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []string{"path"}}

func TestOpenAIToolCallsWithTheSDK(t *testing.T) {
	f := fakellm.Start(t, fakellm.OpenAI, fakellm.Script(
		fakellm.UseTools(fakellm.Call("read_file", map[string]any{"path": "calc.go"})),
		fakellm.Answer{Content: "done"}))
	c := openai.NewClient(openaiopt.WithBaseURL(f.URL+"/v1"), openaiopt.WithAPIKey("k"), openaiopt.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{Model: "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("look")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name: "read_file", Description: openai.String("read"), Parameters: readFileTool})},
	}
	res, err := c.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	calls := res.Choices[0].Message.ToolCalls
	if res.Choices[0].FinishReason != "tool_calls" || len(calls) != 1 || calls[0].Function.Name != "read_file" ||
		calls[0].Function.Arguments != `{"path":"calc.go"}` || !strings.HasPrefix(calls[0].ID, "call_") {
		t.Fatalf("answer %+v", res.Choices[0])
	}
	params.Messages = append(params.Messages, res.Choices[0].Message.ToParam(), openai.ToolMessage("package calc", calls[0].ID))
	params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
	if _, err := c.Chat.Completions.New(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	first, second := f.Requests()[0], f.Requests()[1]
	if len(first.Tools) != 1 || first.Tools[0].Name != "read_file" || first.Tools[0].Parameters["type"] != "object" || !first.ToolsAllowed() {
		t.Errorf("tools offered: %+v", first.Tools)
	}
	got := second.ToolResults()
	if len(got) != 1 || got[0].CallID != calls[0].ID || got[0].Name != "read_file" || got[0].Content != "package calc" ||
		second.ToolChoice != "none" || second.ToolsAllowed() || len(second.Messages[1].ToolCalls) != 1 {
		t.Errorf("second request: results %+v choice %q messages %+v", got, second.ToolChoice, second.Messages)
	}
	if !strings.Contains(second.Text(), "package calc") {
		t.Error("Text() leaves out the tool result")
	}
}

// A conversation the API would refuse is answered 400 and counted as the client's problem.
func TestToolConversationsTheAPIsRefuse(t *testing.T) {
	post := func(url, body string, h map[string]string) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		for k, v := range h {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	cases := []struct {
		provider, path, body string
	}{
		{fakellm.OpenAI, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"call_1","content":"r"}]}`},
		{fakellm.OpenAI, "/v1/chat/completions", `{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}]}`},
		{fakellm.OpenAI, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"none"}`},
		{fakellm.Anthropic, "/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}]}]}`},
		{fakellm.Anthropic, "/v1/messages", `{"model":"m","max_tokens":10,"tools":[{"name":"f","input_schema":{"type":"object"}}],"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"text","text":"x"},{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}]}]}`},
	}
	for i, c := range cases {
		f := fakellm.New(c.provider, fakellm.Reply("never"))
		code := post(f.URL+c.path, c.body, map[string]string{"Content-Type": "application/json", "anthropic-version": "2023-06-01"})
		f.Close()
		if code != http.StatusBadRequest || len(f.Problems()) != 1 || f.Calls() != 0 {
			t.Errorf("case %d: status %d, problems %v, calls %d", i, code, f.Problems(), f.Calls())
		}
	}
}

func TestAnthropicToolUseWithTheSDK(t *testing.T) {
	f := fakellm.Start(t, fakellm.Anthropic, fakellm.Script(
		fakellm.Answer{Content: "Let me look.", ToolCalls: []fakellm.ToolCall{fakellm.Call("search", map[string]any{"query": "Add"})}},
		fakellm.Answer{Content: "found"}))
	c := anthropic.NewClient(anthropicopt.WithBaseURL(f.URL), anthropicopt.WithAPIKey("k"), anthropicopt.WithMaxRetries(0))
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("find Add"))},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "search", Description: anthropic.String("grep"),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"query": map[string]any{"type": "string"}}, Required: []string{"query"}}}}},
	}
	msg, err := c.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != "tool_use" || len(msg.Content) != 2 || msg.Content[0].Text != "Let me look." || msg.Content[1].Type != "tool_use" ||
		msg.Content[1].Name != "search" || string(msg.Content[1].Input) != `{"query":"Add"}` || !strings.HasPrefix(msg.Content[1].ID, "toolu_") {
		t.Fatalf("answer %+v", msg)
	}
	params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(
		anthropic.NewToolResultBlock(msg.Content[1].ID, "calc.go:3: func Add", false), anthropic.NewTextBlock("answer now")))
	params.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
	if _, err := c.Messages.New(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	first, second := f.Requests()[0], f.Requests()[1]
	if len(first.Tools) != 1 || first.Tools[0].Parameters["required"] == nil || !first.ToolsAllowed() {
		t.Errorf("tools offered: %+v", first.Tools)
	}
	got := second.ToolResults()
	if len(got) != 1 || got[0].CallID != msg.Content[1].ID || got[0].Name != "search" || got[0].Content != "calc.go:3: func Add" ||
		second.ToolChoice != "none" || second.ToolsAllowed() || len(second.Messages[1].ToolCalls) != 1 {
		t.Errorf("second request: results %+v choice %q", got, second.ToolChoice)
	}
}

func TestOllamaToolCalls(t *testing.T) {
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Script(
		fakellm.UseTools(fakellm.Call("read_file", map[string]any{"path": "a.go"}), fakellm.Call("git_status", nil)),
		fakellm.Answer{Content: "ok"}))
	post := func(body any) map[string]any {
		b, _ := json.Marshal(body)
		res, err := http.Post(f.URL+"/api/chat", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	tools := []map[string]any{{"type": "function", "function": map[string]any{"name": "read_file", "description": "read", "parameters": readFileTool}}}
	out := post(map[string]any{"model": "worker-v1", "stream": false, "tools": tools,
		"messages": []map[string]any{{"role": "user", "content": "look"}}})
	calls := out["message"].(map[string]any)["tool_calls"].([]any)
	first := calls[0].(map[string]any)
	fn := first["function"].(map[string]any)
	if len(calls) != 2 || fn["name"] != "read_file" || fn["arguments"].(map[string]any)["path"] != "a.go" || fn["index"] != 0.0 ||
		!strings.HasPrefix(first["id"].(string), "call_") || calls[1].(map[string]any)["function"].(map[string]any)["index"] != 1.0 {
		t.Fatalf("tool calls %v", calls)
	}
	post(map[string]any{"model": "worker-v1", "stream": false, "tools": tools, "messages": []map[string]any{
		{"role": "user", "content": "look"}, out["message"].(map[string]any),
		{"role": "tool", "content": "package a", "tool_name": "read_file", "tool_call_id": first["id"]},
		{"role": "tool", "content": "clean", "tool_name": "git_status"},
	}})
	r := f.Requests()[1]
	got := r.ToolResults()
	if len(r.Tools) != 1 || len(got) != 2 || got[0].Name != "read_file" || got[0].Content != "package a" || got[0].CallID != first["id"] ||
		len(r.Messages[1].ToolCalls) != 2 || r.Messages[1].ToolCalls[0].Arguments != `{"path":"a.go"}` {
		t.Errorf("second request: tools %v results %+v messages %+v", r.Tools, got, r.Messages)
	}
}

// Ollama accepts a format with tools, but the model then cannot call them: the fake counts it
// as the client's problem.
func TestOllamaFormatWithToolsIsAProblem(t *testing.T) {
	f := fakellm.New(fakellm.Ollama, fakellm.Reply("{}"))
	defer f.Close()
	res, err := http.Post(f.URL+"/api/chat", "application/json", strings.NewReader(
		`{"model":"m","stream":false,"format":"json","tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"messages":[{"role":"user","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if p := f.Problems(); len(p) != 1 || !strings.Contains(p[0], "format with tools") {
		t.Errorf("problems %v", p)
	}
}

// progressResponse is api.ProgressResponse; the fake's stream lines decode into it with no
// field left over.
type progressResponse struct {
	Status    string `json:"status"`
	Digest    string `json:"digest,omitempty"`
	Total     int64  `json:"total,omitempty"`
	Completed int64  `json:"completed,omitempty"`
}

func readProgress(t *testing.T, res *http.Response) []progressResponse {
	t.Helper()
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("status %d, content type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var out []progressResponse
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var p progressResponse
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("line %s: %v", sc.Bytes(), err)
		}
		out = append(out, p)
	}
	return out
}

func TestOllamaPullCreateAndRestart(t *testing.T) {
	restart := filepath.Join(t.TempDir(), "restart")
	f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("はい"), fakellm.WithModels(), fakellm.WithRestartFile(restart))
	post := func(path, body string) *http.Response {
		t.Helper()
		res, err := http.Post(f.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	tags := func() []string {
		t.Helper()
		res, err := http.Get(f.URL + "/api/tags")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var list struct{ Models []struct{ Name string } }
		if err := json.NewDecoder(res.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range list.Models {
			names = append(names, m.Name)
		}
		return names
	}
	if got := tags(); len(got) != 0 {
		t.Fatalf("a fresh Ollama lists %v", got)
	}
	pulled := readProgress(t, post("/api/pull", `{"model":"qwen2.5:3b"}`))
	if pulled[0].Status != "pulling manifest" || pulled[len(pulled)-1].Status != "success" || pulled[1].Digest == "" || pulled[2].Completed == 0 {
		t.Fatalf("pull %+v", pulled)
	}
	created := readProgress(t, post("/api/create", `{"model":"chat-v1","from":"qwen2.5:3b","system":"Mio","parameters":{"num_ctx":8192,"stop":["<|im_end|>"]}}`))
	if created[len(created)-1].Status != "success" {
		t.Fatalf("create %+v", created)
	}
	if got := tags(); len(got) != 2 || got[0] != "qwen2.5:3b" || got[1] != "chat-v1:latest" {
		t.Fatalf("tags after setup %v", got)
	}
	res := post("/api/show", `{"model":"chat-v1"}`)
	var show struct{ Parameters, System string }
	if err := json.NewDecoder(res.Body).Decode(&show); err != nil || !strings.Contains(show.Parameters, "num_ctx") || show.System != "Mio" {
		t.Fatalf("show %+v %v", show, err)
	}
	res.Body.Close()
	// stream false: one answer, the last status.
	res = post("/api/pull", `{"model":"qwen2.5:7b","stream":false}`)
	var last progressResponse
	if err := json.NewDecoder(res.Body).Decode(&last); err != nil || last.Status != "success" {
		t.Fatalf("pull without stream: %+v %v", last, err)
	}
	res.Body.Close()
	if res = post("/api/create", `{"model":"x"}`); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("create without from: %d", res.StatusCode)
	}
	res.Body.Close()
	if res = post("/api/create", `{"model":"x","from":"qwen2.5:3b","parameters":{"num_gqa":8}}`); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("create with an unknown parameter: %d", res.StatusCode)
	}
	res.Body.Close()
	if n := len(f.AdminRequests()); n != 5 {
		t.Errorf("admin requests %d", n)
	}

	chat := `{"model":"chat-v1","stream":false,"messages":[{"role":"user","content":"hi"}]}`
	f.MissingUntilRestart("chat-v1")
	if res = post("/api/chat", chat); res.StatusCode != http.StatusNotFound {
		t.Fatalf("missing: %d", res.StatusCode)
	}
	res.Body.Close()
	f.DownUntilRestart()
	if _, err := http.Get(f.URL + "/api/tags"); err == nil {
		t.Fatal("a down server answered")
	}
	if err := os.WriteFile(restart, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if res = post("/api/chat", chat); res.StatusCode != http.StatusOK || f.Restarts() != 1 {
		t.Fatalf("after the restart: %d, %d restarts", res.StatusCode, f.Restarts())
	}
	res.Body.Close()
	f.RemoveModel("chat-v1")
	if err := os.WriteFile(restart, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if res = post("/api/chat", chat); res.StatusCode != http.StatusNotFound || f.Restarts() != 2 {
		t.Fatalf("removed model after a restart: %d", res.StatusCode)
	}
	res.Body.Close()
}

// Images as the SDKs send them: OpenAI image_url parts with a data URL, Anthropic base64 image
// blocks; the fakes read back the base64 data and the media type.
func TestImagesWithTheSDKs(t *testing.T) {
	data := "iVBORw0KGgo="
	o := fakellm.Start(t, fakellm.OpenAI, fakellm.Reply("a cat"))
	oc := openai.NewClient(openaiopt.WithBaseURL(o.URL+"/v1"), openaiopt.WithAPIKey("k"), openaiopt.WithMaxRetries(0))
	if _, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart("what is this?"),
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64," + data}),
		})}}); err != nil {
		t.Fatal(err)
	}
	if m := o.Requests()[0].Messages[0]; m.Content != "what is this?" || len(m.Images) != 1 || m.Images[0] != data || m.ImageTypes[0] != "image/png" {
		t.Fatalf("OpenAI message %+v", m)
	}
	a := fakellm.Start(t, fakellm.Anthropic, fakellm.Reply("a cat"))
	ac := anthropic.NewClient(anthropicopt.WithBaseURL(a.URL), anthropicopt.WithAPIKey("k"), anthropicopt.WithMaxRetries(0))
	if _, err := ac.Messages.New(context.Background(), anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 10,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewImageBlockBase64("image/png", data), anthropic.NewTextBlock("what is this?"))}}); err != nil {
		t.Fatal(err)
	}
	if m := a.Requests()[0].Messages[0]; m.Content != "what is this?" || len(m.Images) != 1 || m.Images[0] != data || m.ImageTypes[0] != "image/png" {
		t.Fatalf("Anthropic message %+v", m)
	}
}
