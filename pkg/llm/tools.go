package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// ToolSpec describes one tool a model may call: the provider adapters map it to each wire
// (OpenAI/DeepSeek tools[].function, Anthropic tools[] with input_schema, Ollama tools[]).
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the JSON schema of the arguments: an object schema
	// ({"type":"object","properties":{...},"required":[...]}).
	Parameters map[string]any
}

// ToolCall is one call the model asks for.
type ToolCall struct {
	// ID pairs the call with its result (OpenAI tool_call_id, Anthropic tool_use_id, Ollama's
	// call id; may be empty on Ollama versions that send none).
	ID   string
	Name string
	// Arguments is the JSON object of the arguments, as the model wrote it.
	Arguments string
}

// ToolChoice says whether the model may call the tools of a request.
type ToolChoice string

const (
	// ToolChoiceAuto lets the model decide (the default).
	ToolChoiceAuto ToolChoice = ""
	// ToolChoiceNone asks for an answer without tool calls.
	ToolChoiceNone ToolChoice = "none"
)

// SupportsTools reports whether a provider's adapter speaks tool calling (every real model
// provider; the offline provider answers without tools).
func SupportsTools(provider string) bool {
	switch provider {
	case ProviderOpenAI, ProviderDeepSeek, ProviderAnthropic, ProviderOllama:
		return true
	}
	return false
}

// ToolsConfig is a tools section (coders.tools, loop.tools): how far one model run may go
// with tools before it must answer.
type ToolsConfig struct {
	// MaxCalls is how many tool calls one run may make; 0 turns the tools off.
	MaxCalls int `yaml:"max_calls"`
	// Timeout is the time budget of the tool phase of one run.
	Timeout time.Duration `yaml:"timeout"`
	// MaxTokens is the token budget (input and output, summed over the run's calls) of the
	// tool phase; 0 = none of its own.
	MaxTokens int64 `yaml:"max_tokens"`
}

// DefaultToolsConfig is the default tools section.
func DefaultToolsConfig() ToolsConfig {
	return ToolsConfig{MaxCalls: 8, Timeout: 90 * time.Second, MaxTokens: 50000}
}

// MaxToolCalls is the largest max_calls accepted.
const MaxToolCalls = 50

// Validate checks c; keys are relative to the section (wrap with config.Prefix).
func (c ToolsConfig) Validate() error {
	var errs config.Errors
	if c.MaxCalls < 0 || c.MaxCalls > MaxToolCalls {
		errs.Addf("max_calls", "must be between 0 (tools off) and %d, got %d", MaxToolCalls, c.MaxCalls)
	}
	if c.MaxCalls > 0 && c.Timeout <= 0 {
		errs.Addf("timeout", "must be positive when tools are on, got %s", c.Timeout)
	}
	if c.MaxTokens < 0 {
		errs.Addf("max_tokens", "must not be negative, got %d", c.MaxTokens)
	}
	return errs.Err()
}

// Limits are the loop limits of this section.
func (c ToolsConfig) Limits() ToolLimits {
	return ToolLimits{MaxCalls: c.MaxCalls, MaxDuration: c.Timeout, MaxTokens: c.MaxTokens}
}

// ToolLimits bound one RunTools run. When one is reached the model is told so and asked for
// its final answer without tools: one more call, always made, which the budgets do not cover.
type ToolLimits struct {
	// MaxCalls is how many tools may run; 0 means no tools at all (one plain call).
	MaxCalls int
	// MaxDuration is the time budget of the tool phase (0 = only the context bounds it).
	MaxDuration time.Duration
	// MaxTokens: no further call with tools once the tokens used so far plus the estimated
	// prompt of the next call reach it (0 = no token budget).
	MaxTokens int64
	// MaxCostUSD is the same budget in dollars at Price (0 = none).
	MaxCostUSD float64
	Price      Price
}

// ToolFunc runs one tool call and returns its result for the model. An error is sent back to
// the model as the result (marked as an error), never ends the run: a file the workspace
// refuses is an answer the model can work with.
type ToolFunc func(ctx context.Context, call ToolCall) (string, error)

// Toolbox is what a RunTools run may use.
type Toolbox struct {
	Specs   []ToolSpec
	Execute ToolFunc
	Limits  ToolLimits
	// Logger gets one llm.tool_call line per call (name, sizes, job id; never content) and
	// one llm.tools_done line per run.
	Logger *slog.Logger
	// Now replaces time.Now (tests spend the time budget without waiting).
	Now func() time.Time
}

// Stop reasons of a run.
const (
	ToolStopAnswered = "answered"
	ToolStopMaxCalls = "max_calls"
	ToolStopTime     = "time"
	ToolStopTokens   = "tokens"
	ToolStopCost     = "cost"
)

// ToolRun is the outcome of RunTools.
type ToolRun struct {
	// Response is the final answer, with Usage, Latency and Attempts summed over every call.
	Response *Response
	// Messages is the conversation that led to the answer: the request's messages, then every
	// tool call and result (and the limit notice, when one was reached). Append the answer to
	// continue it; keep Tools declared with ToolChoiceNone when it holds tool calls.
	Messages []Message
	// ModelCalls and ToolCalls count the model calls made and the tools run.
	ModelCalls int
	ToolCalls  int
	// StopReason is ToolStopAnswered, or the limit that ended the tool phase.
	StopReason string
}

// RunTools calls c with req and box's tools, runs the tools the model asks for, feeds the
// results back and repeats until the model answers without tool calls. When a limit of
// box.Limits is reached, the remaining calls of that answer are reported as not run, the
// model is told so and asked for its final answer in one last call with tool choice none.
// A failed model call ends the run with its error; so does the end of ctx.
func RunTools(ctx context.Context, c Client, req Request, box Toolbox) (*ToolRun, error) {
	now := box.Now
	if now == nil {
		now = time.Now
	}
	log := box.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	run := &ToolRun{Messages: append([]Message(nil), req.Messages...)}
	var total Response
	call := func(tools []ToolSpec, choice ToolChoice) (*Response, error) {
		r := req
		r.Messages = run.Messages
		r.Tools, r.ToolChoice = tools, choice
		resp, err := c.Chat(ctx, r)
		run.ModelCalls++
		if err != nil {
			return nil, err
		}
		total.Usage.InputTokens += resp.Usage.InputTokens
		total.Usage.OutputTokens += resp.Usage.OutputTokens
		total.Latency += resp.Latency
		total.Attempts += resp.Attempts
		return resp, nil
	}
	finish := func(resp *Response, reason string) *ToolRun {
		out := *resp
		out.Usage, out.Latency, out.Attempts = total.Usage, total.Latency, total.Attempts
		run.Response, run.StopReason = &out, reason
		log.LogAttrs(ctx, slog.LevelInfo, "llm.tools_done", slog.String("job_id", jobid.FromContext(ctx)),
			slog.String("provider", c.Provider()), slog.String("model", c.Model()),
			slog.Int("model_calls", run.ModelCalls), slog.Int("tool_calls", run.ToolCalls), slog.String("stop_reason", reason),
			slog.Int64("input_tokens", total.Usage.InputTokens), slog.Int64("output_tokens", total.Usage.OutputTokens))
		return run
	}
	if len(box.Specs) == 0 || box.Execute == nil || box.Limits.MaxCalls <= 0 {
		resp, err := call(nil, ToolChoiceAuto)
		if err != nil {
			return nil, err
		}
		return finish(resp, ToolStopAnswered), nil
	}

	start := now()
	stop := ""
	for stop == "" {
		resp, err := call(box.Specs, ToolChoiceAuto)
		if err != nil {
			return nil, err
		}
		if len(resp.ToolCalls) == 0 {
			return finish(resp, ToolStopAnswered), nil
		}
		run.Messages = append(run.Messages, Message{Role: RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
		for _, tc := range resp.ToolCalls {
			if stop == "" {
				stop = box.Limits.reached(run.ToolCalls, now().Sub(start), total.Usage, 0)
			}
			if stop != "" {
				// Every call of an answer needs its result on the OpenAI and Anthropic wires.
				run.Messages = append(run.Messages, toolResult(tc, "not run: "+limitText(stop, box.Limits), true))
				continue
			}
			result, failed, err := box.execute(ctx, log, tc, box.Limits.MaxDuration-now().Sub(start))
			if err != nil {
				return nil, err
			}
			run.ToolCalls++
			run.Messages = append(run.Messages, toolResult(tc, result, failed))
		}
		if stop == "" {
			next := EstimateTokens(run.Messages) + EstimateToolSpecs(box.Specs)
			stop = box.Limits.reached(run.ToolCalls, now().Sub(start), total.Usage, next)
		}
	}
	run.Messages = append(run.Messages, Message{Role: RoleUser, Content: "Tool limit reached (" + limitText(stop, box.Limits) +
		"). Do not call any more tools: give your final answer now, from what you have seen."})
	resp, err := call(box.Specs, ToolChoiceNone)
	if err != nil {
		return nil, err
	}
	return finish(resp, stop), nil
}

// reached names the first limit the run has reached, or "". next is the estimated prompt of
// the next call (0 while an answer's calls are being run).
func (l ToolLimits) reached(calls int, elapsed time.Duration, used Usage, next int64) string {
	switch {
	case calls >= l.MaxCalls:
		return ToolStopMaxCalls
	case l.MaxDuration > 0 && elapsed >= l.MaxDuration:
		return ToolStopTime
	case l.MaxTokens > 0 && used.InputTokens+used.OutputTokens+next >= l.MaxTokens:
		return ToolStopTokens
	case l.MaxCostUSD > 0 && l.Price.Cost(Usage{InputTokens: used.InputTokens + next, OutputTokens: used.OutputTokens}) >= l.MaxCostUSD:
		return ToolStopCost
	}
	return ""
}

func limitText(reason string, l ToolLimits) string {
	switch reason {
	case ToolStopMaxCalls:
		return fmt.Sprintf("at most %d tool calls", l.MaxCalls)
	case ToolStopTime:
		return fmt.Sprintf("the time budget of %s is spent", l.MaxDuration)
	case ToolStopTokens:
		return fmt.Sprintf("the budget of %d tokens is spent", l.MaxTokens)
	case ToolStopCost:
		return fmt.Sprintf("the budget of $%.2f is spent", l.MaxCostUSD)
	}
	return reason
}

func toolResult(tc ToolCall, content string, failed bool) Message {
	return Message{Role: RoleTool, Content: content, ToolCallID: tc.ID, ToolName: tc.Name, ToolError: failed}
}

// execute runs one call within what is left of the time budget and logs it. Only the end of
// ctx is an error; a failing tool is a result marked failed.
func (b Toolbox) execute(ctx context.Context, log *slog.Logger, tc ToolCall, left time.Duration) (string, bool, error) {
	tctx := ctx
	if b.Limits.MaxDuration > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(ctx, max(left, time.Millisecond))
		defer cancel()
	}
	start := time.Now()
	result, err := b.Execute(tctx, tc)
	if ctx.Err() != nil {
		return "", false, ctx.Err()
	}
	failed := err != nil
	if failed {
		result = "error: " + err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			result = "error: the tool did not finish within the time budget"
		}
	}
	log.LogAttrs(ctx, slog.LevelInfo, "llm.tool_call", slog.String("job_id", jobid.FromContext(ctx)),
		slog.String("tool", tc.Name), slog.Int("args_bytes", len(tc.Arguments)), slog.Int("result_bytes", len(result)),
		slog.Bool("tool_error", failed), slog.Int64("latency_ms", time.Since(start).Milliseconds()))
	return result, failed, nil
}

// EstimateToolSpecs estimates what declaring specs adds to every prompt.
func EstimateToolSpecs(specs []ToolSpec) int64 {
	var n int64
	for _, s := range specs {
		schema, _ := json.Marshal(s.Parameters)
		n += EstimateText(s.Name) + EstimateText(s.Description) + EstimateText(string(schema)) + 8
	}
	return n
}

// ParseArguments decodes a call's JSON arguments into v; empty arguments are an empty object.
func (tc ToolCall) ParseArguments(v any) error {
	args := tc.Arguments
	if args == "" {
		args = "{}"
	}
	if err := json.Unmarshal([]byte(args), v); err != nil {
		return fmt.Errorf("arguments of %s are not a JSON object of the declared shape: %w", tc.Name, err)
	}
	return nil
}
