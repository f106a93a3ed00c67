package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// scripted is a Client whose answers are given in order (the last one repeats); it records
// every request and may advance a clock per call.
type scripted struct {
	mu      sync.Mutex
	answers []scriptedAnswer
	reqs    []Request
	clock   *clock
	step    time.Duration
}

type scriptedAnswer struct {
	text  string
	calls []ToolCall
	usage Usage
	err   error
}

func (s *scripted) Chat(_ context.Context, req Request) (*Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	if s.clock != nil {
		s.clock.t = s.clock.t.Add(s.step)
	}
	a := s.answers[min(len(s.reqs)-1, len(s.answers)-1)]
	if a.err != nil {
		return nil, a.err
	}
	return &Response{Text: a.text, ToolCalls: a.calls, Usage: a.usage, Latency: time.Millisecond, Attempts: 1, Provider: "openai", Model: "m"}, nil
}

func (s *scripted) Provider() string { return ProviderOpenAI }
func (s *scripted) Model() string    { return "m" }
func (s *scripted) Cloud() bool      { return true }

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func call(id, name, args string) ToolCall { return ToolCall{ID: id, Name: name, Arguments: args} }

func asks(calls ...ToolCall) scriptedAnswer {
	return scriptedAnswer{calls: calls, usage: Usage{InputTokens: 100, OutputTokens: 10}}
}

func says(text string) scriptedAnswer {
	return scriptedAnswer{text: text, usage: Usage{InputTokens: 100, OutputTokens: 10}}
}

var specs = []ToolSpec{{Name: "read_file", Description: "read a file", Parameters: map[string]any{"type": "object",
	"properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []string{"path"}}}}

// files is a tool executor over a map; it records the calls it ran.
type files struct {
	content map[string]string
	ran     []ToolCall
}

func (f *files) execute(_ context.Context, c ToolCall) (string, error) {
	f.ran = append(f.ran, c)
	var args struct{ Path string }
	if err := c.ParseArguments(&args); err != nil {
		return "", err
	}
	s, ok := f.content[args.Path]
	if !ok {
		return "", fmt.Errorf("%s: no such file", args.Path)
	}
	return s, nil
}

func box(f *files, l ToolLimits, log *slog.Logger) Toolbox {
	return Toolbox{Specs: specs, Execute: f.execute, Limits: l, Logger: log}
}

func TestRunToolsFeedsResultsBackUntilTheModelAnswers(t *testing.T) {
	m := &scripted{answers: []scriptedAnswer{
		asks(call("c1", "read_file", `{"path":"calc.go"}`), call("c2", "read_file", `{"path":"missing.go"}`)),
		says(`{"plan":"ok"}`),
	}}
	f := &files{content: map[string]string{"calc.go": "package calc // CALC-CONTENT"}}
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	ctx := jobid.WithJobID(context.Background(), "job_20260101_007")
	req := Request{Messages: []Message{{Role: RoleSystem, Content: "sys"}, {Role: RoleUser, Content: "task"}}, JSON: true}
	run, err := RunTools(ctx, m, req, box(f, ToolLimits{MaxCalls: 8}, log))
	if err != nil {
		t.Fatal(err)
	}
	if run.Response.Text != `{"plan":"ok"}` || run.StopReason != ToolStopAnswered || run.ModelCalls != 2 || run.ToolCalls != 2 {
		t.Fatalf("run = %+v, response %+v", run, run.Response)
	}
	if run.Response.Usage != (Usage{InputTokens: 200, OutputTokens: 20}) || run.Response.Attempts != 2 || run.Response.Latency != 2*time.Millisecond {
		t.Errorf("usage, attempts and latency must be summed: %+v", run.Response)
	}
	if len(m.reqs) != 2 {
		t.Fatalf("model calls = %d", len(m.reqs))
	}
	for i, r := range m.reqs {
		if len(r.Tools) != 1 || r.ToolChoice != ToolChoiceAuto || !r.JSON {
			t.Errorf("call %d: tools %v choice %q json %v", i, r.Tools, r.ToolChoice, r.JSON)
		}
	}
	second := m.reqs[1].Messages
	if len(second) != 5 || second[2].Role != RoleAssistant || len(second[2].ToolCalls) != 2 {
		t.Fatalf("second request = %+v", second)
	}
	if r := second[3]; r.Role != RoleTool || r.ToolCallID != "c1" || r.ToolName != "read_file" || r.Content != "package calc // CALC-CONTENT" || r.ToolError {
		t.Errorf("first result = %+v", r)
	}
	// A failing tool is a result the model reads, marked as an error, not a failed run.
	if r := second[4]; r.ToolCallID != "c2" || !r.ToolError || !strings.Contains(r.Content, "no such file") {
		t.Errorf("second result = %+v", r)
	}
	if len(run.Messages) != 5 {
		t.Errorf("run.Messages = %d, want the request's 2 plus the call and its 2 results", len(run.Messages))
	}
	// One line per tool call with sizes and the job id; the content never reaches the log.
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if rec["msg"] == "llm.tool_call" {
			lines = append(lines, rec)
		}
	}
	if len(lines) != 2 || lines[0]["tool"] != "read_file" || lines[0]["job_id"] != "job_20260101_007" ||
		lines[0]["args_bytes"] != float64(len(`{"path":"calc.go"}`)) || lines[0]["result_bytes"] != float64(len("package calc // CALC-CONTENT")) ||
		lines[1]["tool_error"] != true {
		t.Errorf("tool_call lines = %v", lines)
	}
	if strings.Contains(logs.String(), "CALC-CONTENT") {
		t.Error("file content in the log")
	}
}

func TestRunToolsStopsAtMaxCalls(t *testing.T) {
	for _, max := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			m := &scripted{answers: []scriptedAnswer{asks(call("c", "read_file", `{"path":"a"}`))}}
			f := &files{content: map[string]string{"a": "A"}}
			run, err := RunTools(context.Background(), m, Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, box(f, ToolLimits{MaxCalls: max}, nil))
			if err != nil {
				t.Fatal(err)
			}
			if len(f.ran) != max || run.ToolCalls != max {
				t.Errorf("tools run = %d, want exactly %d", len(f.ran), max)
			}
			if len(m.reqs) != max+1 || run.ModelCalls != max+1 || run.StopReason != ToolStopMaxCalls {
				t.Fatalf("model calls = %d, stop %q; want %d calls with tools and one without", len(m.reqs), run.StopReason, max)
			}
			for i, r := range m.reqs[:max] {
				if r.ToolChoice != ToolChoiceAuto {
					t.Errorf("call %d may not use tools", i)
				}
			}
			last := m.reqs[max]
			if last.ToolChoice != ToolChoiceNone {
				t.Errorf("the final call must ask for an answer without tools, choice %q", last.ToolChoice)
			}
			notice := last.Messages[len(last.Messages)-1]
			if notice.Role != RoleUser || !strings.Contains(notice.Content, fmt.Sprintf("at most %d tool calls", max)) {
				t.Errorf("the model is not told why: %+v", notice)
			}
			// The model still asked for a tool in its last answer: it is not run, the run ends.
			if len(run.Response.ToolCalls) != 1 {
				t.Errorf("final response = %+v", run.Response)
			}
		})
	}
}

func TestRunToolsLimitInTheMiddleOfAnAnswer(t *testing.T) {
	m := &scripted{answers: []scriptedAnswer{
		asks(call("c1", "read_file", `{"path":"a"}`), call("c2", "read_file", `{"path":"a"}`), call("c3", "read_file", `{"path":"a"}`)),
		says("done"),
	}}
	f := &files{content: map[string]string{"a": "A"}}
	run, err := RunTools(context.Background(), m, Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, box(f, ToolLimits{MaxCalls: 2}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.ran) != 2 || len(m.reqs) != 2 || m.reqs[1].ToolChoice != ToolChoiceNone || run.Response.Text != "done" {
		t.Fatalf("ran %d, calls %d, run %+v", len(f.ran), len(m.reqs), run)
	}
	// Every call of the answer gets a result: the third one says it was not run.
	msgs := m.reqs[1].Messages
	third := msgs[4]
	if third.Role != RoleTool || third.ToolCallID != "c3" || !third.ToolError || !strings.HasPrefix(third.Content, "not run:") {
		t.Errorf("third result = %+v", third)
	}
}

func TestRunToolsBudgets(t *testing.T) {
	tests := []struct {
		name     string
		limits   ToolLimits
		step     time.Duration
		usage    Usage
		want     string
		wantRuns int
		// wantCalls counts the model calls: an answer whose calls meet the limit is one more
		// call than the tools run, and the final call without tools another.
		wantCalls int
	}{
		{name: "time", limits: ToolLimits{MaxCalls: 8, MaxDuration: 25 * time.Second}, step: 10 * time.Second,
			usage: Usage{InputTokens: 1}, want: ToolStopTime, wantRuns: 2, wantCalls: 4},
		{name: "tokens", limits: ToolLimits{MaxCalls: 8, MaxTokens: 2500}, usage: Usage{InputTokens: 900, OutputTokens: 100},
			want: ToolStopTokens, wantRuns: 2, wantCalls: 4},
		{name: "cost", limits: ToolLimits{MaxCalls: 8, MaxCostUSD: 0.01, Price: Price{InputPerMTok: 5, OutputPerMTok: 20}},
			usage: Usage{InputTokens: 800, OutputTokens: 100}, want: ToolStopCost, wantRuns: 1, wantCalls: 3},
		{name: "tokens before the next call", limits: ToolLimits{MaxCalls: 8, MaxTokens: 1001}, usage: Usage{InputTokens: 900, OutputTokens: 100},
			want: ToolStopTokens, wantRuns: 1, wantCalls: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			a := asks(call("c", "read_file", `{"path":"a"}`))
			a.usage = tt.usage
			m := &scripted{answers: []scriptedAnswer{a}, clock: c, step: tt.step}
			f := &files{content: map[string]string{"a": "A"}}
			b := box(f, tt.limits, nil)
			b.Now = c.now
			run, err := RunTools(context.Background(), m, Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, b)
			if err != nil {
				t.Fatal(err)
			}
			if run.StopReason != tt.want || len(f.ran) != tt.wantRuns || len(m.reqs) != tt.wantCalls {
				t.Fatalf("stop %q after %d tools and %d calls; want %q after %d and %d", run.StopReason, len(f.ran), len(m.reqs), tt.want, tt.wantRuns, tt.wantCalls)
			}
			if m.reqs[len(m.reqs)-1].ToolChoice != ToolChoiceNone {
				t.Error("the final call may still use tools")
			}
		})
	}
}

func TestRunToolsWithoutToolsIsOnePlainCall(t *testing.T) {
	for name, b := range map[string]Toolbox{
		"max_calls 0": box(&files{}, ToolLimits{MaxCalls: 0}, nil),
		"no specs":    {Execute: (&files{}).execute, Limits: ToolLimits{MaxCalls: 8}},
	} {
		t.Run(name, func(t *testing.T) {
			m := &scripted{answers: []scriptedAnswer{says("plain")}}
			run, err := RunTools(context.Background(), m, Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}, b)
			if err != nil {
				t.Fatal(err)
			}
			if run.Response.Text != "plain" || len(m.reqs) != 1 || run.ToolCalls != 0 {
				t.Fatalf("run %+v, requests %+v", run, m.reqs)
			}
			if len(m.reqs[0].Tools) != 0 {
				t.Error("tools offered to a run that may not use them")
			}
		})
	}
}

func TestRunToolsErrors(t *testing.T) {
	boom := errors.New("boom")
	m := &scripted{answers: []scriptedAnswer{asks(call("c", "read_file", `{"path":"a"}`)), {err: boom}}}
	_, err := RunTools(context.Background(), m, Request{}, box(&files{content: map[string]string{"a": "A"}}, ToolLimits{MaxCalls: 4}, nil))
	if !errors.Is(err, boom) {
		t.Errorf("a failed model call must end the run: %v", err)
	}
	// The end of the caller's context ends the run, even inside a tool.
	ctx, cancel := context.WithCancel(context.Background())
	m = &scripted{answers: []scriptedAnswer{asks(call("c", "read_file", `{}`))}}
	b := Toolbox{Specs: specs, Limits: ToolLimits{MaxCalls: 4}, Execute: func(context.Context, ToolCall) (string, error) {
		cancel()
		return "", context.Canceled
	}}
	if _, err := RunTools(ctx, m, Request{}, b); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
	// Arguments that are not the declared object are the model's problem, reported to it.
	m = &scripted{answers: []scriptedAnswer{asks(call("c", "read_file", `["a"]`)), says("ok")}}
	run, err := RunTools(context.Background(), m, Request{}, box(&files{}, ToolLimits{MaxCalls: 4}, nil))
	if err != nil || !m.reqs[1].Messages[1].ToolError || !strings.Contains(m.reqs[1].Messages[1].Content, "not a JSON object") {
		t.Errorf("run %+v err %v messages %+v", run, err, m.reqs[1].Messages)
	}
}

func TestToolsConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  ToolsConfig
		want string
	}{
		{DefaultToolsConfig(), ""},
		{ToolsConfig{MaxCalls: 0}, ""},
		{ToolsConfig{MaxCalls: -1, Timeout: time.Second}, "max_calls"},
		{ToolsConfig{MaxCalls: MaxToolCalls + 1, Timeout: time.Second}, "max_calls"},
		{ToolsConfig{MaxCalls: 3}, "timeout"},
		{ToolsConfig{MaxCalls: 3, Timeout: time.Second, MaxTokens: -5}, "max_tokens"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if (tt.want == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), tt.want+":") {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
	if l := DefaultToolsConfig().Limits(); l.MaxCalls != 8 || l.MaxDuration <= 0 || l.MaxTokens <= 0 {
		t.Errorf("default limits %+v", l)
	}
}

func TestMaskingCoversToolResults(t *testing.T) {
	const secret = "sk-proj-ToolResultSecretAbCdEfGhIjKlMnOp"
	req := maskRequest(Request{Messages: []Message{
		{Role: RoleAssistant, ToolCalls: []ToolCall{call("c", "read_file", `{"path":"a"}`)}},
		{Role: RoleTool, ToolCallID: "c", ToolName: "read_file", Content: "key = " + secret + " mail taro@example.com"},
	}})
	got := req.Messages[1]
	if strings.Contains(got.Content, secret) || strings.Contains(got.Content, "taro@example.com") || got.ToolCallID != "c" || got.ToolName != "read_file" {
		t.Errorf("masked result = %+v", got)
	}
	if req.Messages[0].ToolCalls[0].Arguments != `{"path":"a"}` {
		t.Errorf("tool call arguments changed: %+v", req.Messages[0])
	}
}

func TestStripFence(t *testing.T) {
	for in, want := range map[string]string{
		"```json\n{\"a\":1}\n```": `{"a":1}`,
		"```\n{\"a\":1}```":       `{"a":1}`,
		`{"a":1}`:                 `{"a":1}`,
		"  {\"a\":\"```\"}":       "  {\"a\":\"```\"}",
	} {
		if got := StripFence(in); got != want {
			t.Errorf("StripFence(%q) = %q, want %q", in, got, want)
		}
	}
}
