package fakellm

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// Tool is a tool a request offers (OpenAI's tools[].function, Anthropic's tools[] with
// input_schema as Parameters, Ollama's tools[].function), in the model layer's neutral shape.
type Tool = llm.ToolSpec

// ToolCall is a call the model asks for: in an Answer (the fake writes it in the provider's
// shape, making an id in the provider's style when it is empty) or in an assistant message of
// a request.
type ToolCall = llm.ToolCall

// functionTool is a tools[] entry of OpenAI's and Ollama's requests.
type functionTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"function"`
}

func functionTools(in []functionTool) []Tool {
	var out []Tool
	for _, t := range in {
		out = append(out, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return out
}

// ToolResult is a tool result sent back in a request: an OpenAI or Ollama message of role
// tool, or a tool_result block of an Anthropic user turn.
type ToolResult struct {
	CallID  string
	Name    string
	Content string
	IsError bool
}

// Call is a ToolCall of name with args encoded as its JSON arguments.
func Call(name string, args any) ToolCall {
	b, err := json.Marshal(args)
	if err != nil {
		panic("fakellm: tool arguments: " + err.Error())
	}
	return ToolCall{Name: name, Arguments: string(b)}
}

// UseTools is an answer asking for calls (and no text).
func UseTools(calls ...ToolCall) Answer { return Answer{ToolCalls: calls} }

// ToolResults are every tool result of the request, in order.
func (r Request) ToolResults() []ToolResult {
	var out []ToolResult
	for _, m := range r.Messages {
		out = append(out, m.ToolResults...)
	}
	return out
}

// ToolsAllowed reports whether the model may call tools in its answer: tools are offered and
// the tool choice is not none.
func (r Request) ToolsAllowed() bool { return len(r.Tools) > 0 && r.ToolChoice != "none" }

var callSeq atomic.Int64

// callIDs fills empty ids in the style of provider: OpenAI call_…, Anthropic toolu_…, Ollama
// call_ and eight lower-case characters.
func callIDs(provider string, calls []ToolCall) []ToolCall {
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		if c.ID == "" {
			n := callSeq.Add(1)
			switch provider {
			case Anthropic:
				c.ID = fmt.Sprintf("toolu_01Fake%012d", n)
			case Ollama:
				c.ID = fmt.Sprintf("call_%08x", n)
			default:
				c.ID = fmt.Sprintf("call_Fake%016d", n)
			}
		}
		out[i] = c
	}
	return out
}

// argumentsObject is a call's arguments as the JSON object Anthropic's input and Ollama's
// arguments are; a scripted answer with anything else is a mistake of the test.
func (s *Server) argumentsObject(c ToolCall) map[string]any {
	obj := map[string]any{}
	if c.Arguments == "" {
		return obj
	}
	if err := json.Unmarshal([]byte(c.Arguments), &obj); err != nil {
		s.problem("scripted tool call %s: arguments %q are not a JSON object", c.Name, c.Arguments)
	}
	return obj
}

// pairCalls checks that every call of an assistant message is answered by a result before the
// next turn of the conversation, and that every result answers a call: what OpenAI and
// Anthropic refuse with 400. It returns the problem, or "".
func pairCalls(msgs []Message) string {
	open := map[string]bool{}
	for i, m := range msgs {
		for _, r := range m.ToolResults {
			if !open[r.CallID] {
				return fmt.Sprintf("messages.%d: tool result for %q answers no call of the previous assistant turn", i, r.CallID)
			}
			delete(open, r.CallID)
		}
		if m.Role == "assistant" || (m.Role == "user" && len(m.ToolResults) == 0) {
			if len(open) > 0 {
				return fmt.Sprintf("messages.%d: tool calls without results right after them: %v", i, keys(open))
			}
		}
		for _, c := range m.ToolCalls {
			open[c.ID] = true
		}
	}
	if len(open) > 0 {
		return fmt.Sprintf("tool calls without results at the end of the conversation: %v", keys(open))
	}
	return ""
}

func keys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
