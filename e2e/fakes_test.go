package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
)

// Credentials the suite is started with; the fakes accept only these.
const (
	lineSecret    = "e2e-line-secret-0123456789abcdefghij"
	lineToken     = "e2e-line-token-0123456789abcdefghijklmnop"
	slackSecret   = "e2e-slack-secret-0123456789abcdefghij"
	slackToken    = "xoxb-e2e-0123456789-abcdefghijklmnopqrstuv"
	slackBotUser  = fakeslack.BotUserID
	openAIKey     = "sk-e2e-0123456789abcdefghij"
	approvalToken = "e2e-approval-token-0123456789abcdefghij"
)

// outMessage is one message a chat platform accepted: its texts and its buttons.
type outMessage struct {
	API     string // reply, push, chat.postMessage, chat.update
	To      string
	TS      string // Slack message ts
	Texts   []string
	Buttons []button
}

type button struct {
	Kind string // LINE: postback; Slack: the action_id
	Data string // LINE postback data or Slack button value
}

func (m outMessage) text() string { return strings.Join(m.Texts, "\n") }

// startLINE starts the shared LINE Messaging API fake for the suite's channel access token.
func startLINE(t *testing.T) *fakeline.Server {
	f := fakeline.NewServer(lineToken)
	t.Cleanup(f.Close)
	return f
}

// startSlack starts the shared Slack Web API fake for the suite's bot token; its API base URL
// is URL + "/api".
func startSlack(t *testing.T) *fakeslack.Server {
	f := fakeslack.NewServer(slackToken)
	t.Cleanup(f.Close)
	return f
}

// lineMessages are the messages the LINE fake accepted, one per LINE message.
func (s *suite) lineMessages() []outMessage {
	var out []outMessage
	for _, sent := range s.line.Sent() {
		to := sent.To
		if sent.Kind == "reply" {
			to = sent.ReplyToken
		}
		for _, m := range sent.Messages {
			om := outMessage{API: sent.Kind, To: to, Texts: m.Texts()}
			for _, a := range m.Postbacks() {
				om.Buttons = append(om.Buttons, button{Kind: "postback", Data: a.Data})
			}
			out = append(out, om)
		}
	}
	return out
}

// slackMessages are the posts and updates the Slack fake accepted.
func (s *suite) slackMessages() []outMessage {
	var out []outMessage
	for _, p := range s.slack.Posts() {
		om := outMessage{API: p.Method, To: p.Channel + ":" + p.ThreadTS, TS: p.TS, Texts: p.Texts()}
		for _, b := range p.Buttons() {
			om.Buttons = append(om.Buttons, button{Kind: b.ActionID, Data: b.Value})
		}
		out = append(out, om)
	}
	return out
}

// waitMessage polls until a message of list satisfies ok.
func waitMessage(t *testing.T, what string, timeout time.Duration, list func() []outMessage, problems func() []string,
	ok func(outMessage) bool) outMessage {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, m := range list() {
			if ok(m) {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s; messages: %+v; problems: %v", what, timeout, list(), problems())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var jobInPrompt = regexp.MustCompile(`job_[0-9]{8}_(?:[0-9]{3,}|[0-9a-f]{8})`)

// helloContent is what the proposal writes.
const helloContent = "# Hello\n\nPicoClaw e2e\n"

// startOpenAI starts the Chat Completions API fake. It answers every request with a proposal
// creating docs/hello.md for the job named in the prompt.
func startOpenAI(t *testing.T) *fakellm.Server {
	return fakellm.Start(t, fakellm.OpenAI, helloProposal, fakellm.WithAPIKey(openAIKey))
}

func helloProposal(req fakellm.Request) fakellm.Answer {
	job := ""
	for _, m := range req.Messages {
		if m.Role == "user" && job == "" {
			job = jobInPrompt.FindString(m.Content)
		}
	}
	if strings.Contains(req.Text(), screenshotWord) {
		return screenshotProposal(job)
	}
	patch, _ := json.Marshal([]map[string]any{{
		"type": "file_edit", "action": "create", "target": "docs/hello.md", "content": helloContent,
	}})
	proposal, _ := json.Marshal(map[string]any{
		"job_id": job,
		"plan":   "docs/hello.md を作成します。",
		"patch":  string(patch),
		"risk": map[string]any{"level": "low", "destructive": false, "compatibility_issues": []string{},
			"rollback_possible": true, "notes": ""},
		"cost_hint":     map[string]any{"estimated_tokens": 0, "estimated_cost_usd": 0, "near_limit": false},
		"need_approval": true,
		"uses_browser":  false,
		"task_type":     "docs",
	})
	return fakellm.Answer{Content: string(proposal), PromptTokens: 420, CompletionTokens: 120}
}

// screenshotWord in a request makes the order propose a browser job that takes a screenshot.
const screenshotWord = "スクリーンショット"

func screenshotProposal(job string) fakellm.Answer {
	patch, _ := json.Marshal([]map[string]any{
		{"type": "browser", "action": "chrome_navigate", "target": "https://example.test/"},
		{"type": "browser", "action": "chrome_screenshot"},
	})
	proposal, _ := json.Marshal(map[string]any{
		"job_id": job,
		"plan":   "https://example.test/ を開いてスクリーンショットを撮ります。",
		"patch":  string(patch),
		"risk": map[string]any{"level": "low", "destructive": false, "compatibility_issues": []string{},
			"rollback_possible": true, "notes": ""},
		"cost_hint":     map[string]any{"estimated_tokens": 0, "estimated_cost_usd": 0, "near_limit": false},
		"need_approval": true,
		"uses_browser":  true,
		"task_type":     "ops",
	})
	return fakellm.Answer{Content: string(proposal), PromptTokens: 420, CompletionTokens: 120}
}

// visionModel is the vision model the image scenario configures (models.vision).
const visionModel = "qwen2.5vl:7b"

// startOllama starts a local Ollama server with the suite's models installed. /api/chat answers
// a classifier prompt with a CHAT route, a message with images with what it "sees", and
// anything else with a short chat reply.
func startOllama(t *testing.T) *fakellm.Server {
	return fakellm.Start(t, fakellm.Ollama, func(req fakellm.Request) fakellm.Answer {
		for _, m := range req.Messages {
			if len(m.Images) > 0 {
				return fakellm.Answer{Content: "猫が写っています。", PromptTokens: 600, CompletionTokens: 8}
			}
		}
		if strings.Contains(req.Text(), `"route"`) {
			return fakellm.Answer{Content: `{"route":"CHAT","confidence":0.9,"reason":"conversation","evidence":[]}`,
				PromptTokens: 10, CompletionTokens: 5}
		}
		return fakellm.Answer{Content: "はい、Mio です。", PromptTokens: 10, CompletionTokens: 5}
	}, fakellm.WithModels("chat-v1:latest", "worker-v1:latest", visionModel), fakellm.WithParameters("num_ctx 8192"))
}
