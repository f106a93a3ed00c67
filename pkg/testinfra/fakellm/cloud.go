package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// content is a message content that is a string or an array of typed parts (OpenAI's and
// Anthropic's request shapes both allow either).
type content string

func (c *content) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = content(s)
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return fmt.Errorf("content is neither a string nor an array of parts: %w", err)
	}
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.Text)
	}
	*c = content(sb.String())
	return nil
}

// openAIRequest is the Chat Completions request (openai-go's ChatCompletionNewParams).
type openAIRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string  `json:"role"`
		Content content `json:"content"`
	} `json:"messages"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format,omitempty"`
	Stream bool `json:"stream,omitempty"`
}

func (s *Server) openAIChat(w http.ResponseWriter, r *http.Request) {
	if s.apiKey != "" && r.Header.Get("Authorization") != "Bearer "+s.apiKey {
		writeJSON(w, http.StatusUnauthorized, openAIError("invalid_request_error", "invalid_api_key", "Incorrect API key provided."))
		return
	}
	var in openAIRequest
	raw, ok := readBody(w, r, s, &in)
	if !ok {
		return
	}
	if in.Model == "" || len(in.Messages) == 0 {
		s.problem("chat/completions without model or messages")
		writeJSON(w, http.StatusBadRequest, openAIError("invalid_request_error", "", "model and messages are required"))
		return
	}
	if in.Stream {
		s.problem("chat/completions: streaming is not part of this fake")
		writeJSON(w, http.StatusBadRequest, openAIError("invalid_request_error", "", "stream is not supported here"))
		return
	}
	req := Request{Provider: OpenAI, Model: in.Model, Header: r.Header.Clone(), Raw: raw,
		JSON: in.ResponseFormat != nil && strings.HasPrefix(in.ResponseFormat.Type, "json")}
	for i, m := range in.Messages {
		if i == 0 && (m.Role == "system" || m.Role == "developer") {
			req.System = string(m.Content)
		}
		req.Messages = append(req.Messages, Message{Role: m.Role, Content: string(m.Content)})
	}
	a, ok := s.serve(r, req)
	if !ok {
		return
	}
	if a.Status != 0 && a.Status != http.StatusOK {
		writeJSON(w, a.Status, openAIError(firstNonEmpty(a.ErrorType, "api_error"), a.ErrorCode, firstNonEmpty(a.ErrorMessage, http.StatusText(a.Status))))
		return
	}
	in1, out := tokens(a.PromptTokens, req.Text()), tokens(a.CompletionTokens, a.Content)
	writeJSON(w, http.StatusOK, map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", time.Now().UnixNano()), "object": "chat.completion",
		"created": time.Now().Unix(), "model": in.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "logprobs": nil,
			"message": map[string]any{"role": "assistant", "content": a.Content, "refusal": nil}}},
		"usage": map[string]any{"prompt_tokens": in1, "completion_tokens": out, "total_tokens": in1 + out},
	})
}

func openAIError(typ, code, msg string) map[string]any {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if code != "" {
		e["code"] = code
	}
	return map[string]any{"error": e}
}

// anthropicRequest is the Messages API request (anthropic-sdk-go's MessageNewParams).
type anthropicRequest struct {
	Model     string  `json:"model"`
	MaxTokens int     `json:"max_tokens"`
	System    content `json:"system,omitempty"`
	Messages  []struct {
		Role    string  `json:"role"`
		Content content `json:"content"`
	} `json:"messages"`
	Stream bool `json:"stream,omitempty"`
}

func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request) {
	if s.apiKey != "" && r.Header.Get("X-Api-Key") != s.apiKey {
		writeJSON(w, http.StatusUnauthorized, anthropicError("authentication_error", "invalid x-api-key"))
		return
	}
	if r.Header.Get("Anthropic-Version") == "" {
		s.problem("messages without the anthropic-version header")
		writeJSON(w, http.StatusBadRequest, anthropicError("invalid_request_error", "anthropic-version header is required"))
		return
	}
	var in anthropicRequest
	raw, ok := readBody(w, r, s, &in)
	if !ok {
		return
	}
	if in.Model == "" || in.MaxTokens <= 0 || len(in.Messages) == 0 || in.Stream {
		s.problem("messages: model, max_tokens and messages are required; stream is not part of this fake")
		writeJSON(w, http.StatusBadRequest, anthropicError("invalid_request_error", "bad request"))
		return
	}
	req := Request{Provider: Anthropic, Model: in.Model, System: string(in.System), Header: r.Header.Clone(), Raw: raw}
	for _, m := range in.Messages {
		req.Messages = append(req.Messages, Message{Role: m.Role, Content: string(m.Content)})
	}
	a, ok := s.serve(r, req)
	if !ok {
		return
	}
	if a.Status != 0 && a.Status != http.StatusOK {
		typ := a.ErrorType
		if typ == "" {
			typ = map[int]string{401: "authentication_error", 403: "permission_error", 404: "not_found_error",
				429: "rate_limit_error", 529: "overloaded_error"}[a.Status]
		}
		writeJSON(w, a.Status, anthropicError(firstNonEmpty(typ, "api_error"), firstNonEmpty(a.ErrorMessage, http.StatusText(a.Status))))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": fmt.Sprintf("msg_%d", time.Now().UnixNano()), "type": "message", "role": "assistant", "model": in.Model,
		"content":     []map[string]any{{"type": "text", "text": a.Content}},
		"stop_reason": "end_turn", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": tokens(a.PromptTokens, req.Text()), "output_tokens": tokens(a.CompletionTokens, a.Content)},
	})
}

func anthropicError(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}
