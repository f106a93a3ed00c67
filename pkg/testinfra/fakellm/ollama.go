package fakellm

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// ollamaToolCall is api.ToolCall.
type ollamaToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int            `json:"index"`
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"function"`
}

// ollamaChatRequest is api.ChatRequest as Ollama defines it (the fields a client sends).
type ollamaChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string           `json:"role"`
		Content    string           `json:"content"`
		Images     []string         `json:"images,omitempty"`
		ToolCalls  []ollamaToolCall `json:"tool_calls,omitempty"`
		ToolName   string           `json:"tool_name,omitempty"`
		ToolCallID string           `json:"tool_call_id,omitempty"`
	} `json:"messages"`
	Tools     []functionTool  `json:"tools,omitempty"`
	Stream    *bool           `json:"stream,omitempty"`
	Format    json.RawMessage `json:"format,omitempty"`
	KeepAlive any             `json:"keep_alive,omitempty"`
	Options   map[string]any  `json:"options,omitempty"`
	Think     any             `json:"think,omitempty"`
}

func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request) {
	var in ollamaChatRequest
	raw, ok := readBody(w, r, s, &in)
	if !ok {
		return
	}
	if in.Model == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "model is required"})
		return
	}
	if !s.hasModel(in.Model) {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("model %q not found, try pulling it first", in.Model)})
		return
	}
	req := Request{Provider: Ollama, Model: in.Model, Options: in.Options, KeepAlive: in.KeepAlive, Header: r.Header.Clone(), Raw: raw,
		Stream: in.Stream == nil || *in.Stream,
		JSON:   len(in.Format) > 0 && string(in.Format) != "null" && string(in.Format) != `""`}
	req.Tools = functionTools(in.Tools)
	for i, m := range in.Messages {
		if i == 0 && m.Role == "system" {
			req.System = m.Content
		}
		// api.ImageData is []byte: an image that is not base64 does not decode.
		for _, img := range m.Images {
			if _, err := base64.StdEncoding.DecodeString(img); err != nil {
				s.problem("api/chat: image is not base64: %v", err)
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "illegal base64 data in images"})
				return
			}
		}
		msg := Message{Role: m.Role, Content: m.Content, Images: m.Images}
		for _, c := range m.ToolCalls {
			args, _ := json.Marshal(c.Function.Arguments)
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: string(args)})
		}
		if m.Role == "tool" {
			msg.ToolResults = []ToolResult{{CallID: m.ToolCallID, Name: m.ToolName, Content: m.Content}}
		}
		req.Messages = append(req.Messages, msg)
	}
	// Ollama accepts these, but they do not work: a client of this fake must not send them.
	if len(req.Tools) > 0 && req.JSON {
		s.problem("api/chat: format with tools (a format keeps the model from calling tools)")
	}
	for _, r := range req.ToolResults() {
		if r.Name == "" {
			s.problem("api/chat: a tool message without tool_name")
		}
	}
	a, ok := s.serve(r, req)
	if !ok {
		return
	}
	if a.Status != 0 && a.Status != http.StatusOK {
		writeJSON(w, a.Status, map[string]any{"error": firstNonEmpty(a.ErrorMessage, http.StatusText(a.Status))})
		return
	}
	message := map[string]any{"role": "assistant", "content": a.Content}
	if len(a.ToolCalls) > 0 {
		var calls []map[string]any
		for i, c := range callIDs(Ollama, a.ToolCalls) {
			calls = append(calls, map[string]any{"id": c.ID, "function": map[string]any{"index": i, "name": c.Name, "arguments": s.argumentsObject(c)}})
		}
		message["tool_calls"] = calls
	}
	final := map[string]any{
		"model": in.Model, "created_at": time.Now().UTC().Format(time.RFC3339Nano),
		"message": message,
		"done":    true, "done_reason": "stop", "total_duration": 1_000_000, "load_duration": 1000,
		"prompt_eval_count": tokens(a.PromptTokens, req.Text()), "prompt_eval_duration": 1000,
		"eval_count": tokens(a.CompletionTokens, a.Content), "eval_duration": 1000,
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, final)
		return
	}
	// Streaming (Ollama's default): NDJSON chunks, then the final chunk without content.
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	if calls, ok := message["tool_calls"]; ok {
		// Ollama streams the parsed calls in a chunk of their own.
		_ = enc.Encode(map[string]any{"model": in.Model, "created_at": time.Now().UTC().Format(time.RFC3339Nano),
			"message": map[string]any{"role": "assistant", "content": "", "tool_calls": calls}, "done": false})
	}
	for _, part := range chunks(a.Content) {
		_ = enc.Encode(map[string]any{"model": in.Model, "created_at": time.Now().UTC().Format(time.RFC3339Nano),
			"message": map[string]any{"role": "assistant", "content": part}, "done": false})
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	final["message"] = map[string]any{"role": "assistant", "content": ""}
	_ = enc.Encode(final)
}

// chunks splits an answer into a few stream chunks.
func chunks(s string) []string {
	if s == "" {
		return nil
	}
	r := []rune(s)
	n := max(1, len(r)/3)
	var out []string
	for i := 0; i < len(r); i += n {
		out = append(out, string(r[i:min(i+n, len(r))]))
	}
	return out
}

func firstNonEmpty(a ...string) string {
	for _, s := range a {
		if s != "" {
			return s
		}
	}
	return ""
}
