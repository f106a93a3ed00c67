package app

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
)

// wire is a provider answer shape: OpenAI chat completions or Anthropic Messages.
type wire string

const (
	wireOpenAI    wire = "openai"
	wireAnthropic wire = "anthropic"
)

// reply is one scripted answer: a model text (status 200) or an HTTP error status, optionally
// held back.
type reply struct {
	text   string
	status int
	hang   bool
	delay  time.Duration
}

// fakeModel is the shared provider fake (pkg/testinfra/fakellm) with scripted answers.
type fakeModel struct {
	srv *fakellm.Server
}

func newFakeModel(t *testing.T, w wire, replies ...reply) *fakeModel {
	t.Helper()
	provider := fakellm.OpenAI
	if w == wireAnthropic {
		provider = fakellm.Anthropic
	}
	var answers []fakellm.Answer
	for _, r := range replies {
		a := fakellm.Answer{Content: r.text, Status: r.status, Hang: r.hang, Delay: r.delay,
			PromptTokens: 1000, CompletionTokens: 500}
		if r.status == http.StatusUnauthorized {
			a.ErrorType, a.ErrorCode, a.ErrorMessage = "invalid_request_error", "invalid_api_key", "Incorrect API key"
		}
		answers = append(answers, a)
	}
	return &fakeModel{srv: fakellm.Start(t, provider, fakellm.Script(answers...))}
}

// requests are the request bodies received so far.
func (f *fakeModel) requests() []map[string]any {
	var out []map[string]any
	for _, r := range f.srv.Requests() {
		var body map[string]any
		_ = json.Unmarshal(r.Raw, &body)
		out = append(out, body)
	}
	return out
}
