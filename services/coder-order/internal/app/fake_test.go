package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
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

// fakeModel is a local server speaking one provider's wire protocol with scripted answers;
// it records every request body.
type fakeModel struct {
	wire    wire
	mu      sync.Mutex
	replies []reply
	bodies  []map[string]any
	srv     *httptest.Server
	// inflight and maxInflight measure how many requests were served at once.
	inflight, maxInflight int
}

func newFakeModel(t *testing.T, w wire, replies ...reply) *fakeModel {
	t.Helper()
	f := &fakeModel{wire: w, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies = append(f.bodies, body)
	rp := f.replies[min(n, len(f.replies)-1)]
	f.inflight++
	f.maxInflight = max(f.maxInflight, f.inflight)
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.inflight--; f.mu.Unlock() }()
	if rp.delay > 0 {
		time.Sleep(rp.delay)
	}
	if rp.hang {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if rp.status != 0 && rp.status != 200 {
		w.WriteHeader(rp.status)
		if f.wire == wireAnthropic {
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
		} else {
			_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)
		}
		return
	}
	text, _ := json.Marshal(rp.text)
	if f.wire == wireAnthropic {
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":%s}],"stop_reason":"end_turn","usage":{"input_tokens":1000,"output_tokens":500}}`, text)
		return
	}
	fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}}`, text)
}

func (f *fakeModel) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.bodies...)
}
