package fakellm

import (
	"encoding/base64"
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

// openAIContent is a user message's content: a string or ChatCompletionContentPart values
// (text, and image_url whose url is a data URL or a web address).
type openAIContent struct {
	Text   string
	Images []string
	Types  []string
	// Bad says what the API would refuse about the parts.
	Bad string
}

func (c *openAIContent) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		c.Text = s
		return nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL *struct {
			URL    string `json:"url"`
			Detail string `json:"detail"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return fmt.Errorf("content is neither a string nor an array of parts: %w", err)
	}
	var sb strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text":
			sb.WriteString(p.Text)
		case "image_url":
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				c.Bad = "image_url.url is required"
				continue
			}
			mime, data, ok := parseDataURL(p.ImageURL.URL)
			if !ok {
				c.Bad = "image_url.url must be a base64 data URL of an image here"
				continue
			}
			c.Images, c.Types = append(c.Images, data), append(c.Types, mime)
		default:
			c.Bad = fmt.Sprintf("unknown content part type %q", p.Type)
		}
	}
	c.Text = sb.String()
	return nil
}

// parseDataURL splits data:<mime>;base64,<data>, checking the data decodes.
func parseDataURL(u string) (mime, data string, ok bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", "", false
	}
	head, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", "", false
	}
	mime, ok = strings.CutSuffix(head, ";base64")
	if !ok || !strings.HasPrefix(mime, "image/") {
		return "", "", false
	}
	if _, err := base64.StdEncoding.DecodeString(data); err != nil {
		return "", "", false
	}
	return mime, data, true
}

// openAIRequest is the Chat Completions request (openai-go's ChatCompletionNewParams).
type openAIRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string        `json:"role"`
		Content    openAIContent `json:"content"`
		ToolCallID string        `json:"tool_call_id,omitempty"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls,omitempty"`
	} `json:"messages"`
	Tools []functionTool `json:"tools,omitempty"`
	// ToolChoice is "none", "auto", "required" or an object naming a function.
	ToolChoice     json.RawMessage `json:"tool_choice,omitempty"`
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
	req.Tools = functionTools(in.Tools)
	if len(in.ToolChoice) > 0 {
		var choice string
		if json.Unmarshal(in.ToolChoice, &choice) != nil {
			choice = "function"
		}
		req.ToolChoice = choice
	}
	names := map[string]string{}
	badPart := ""
	for i, m := range in.Messages {
		if i == 0 && (m.Role == "system" || m.Role == "developer") {
			req.System = m.Content.Text
		}
		if m.Content.Bad != "" {
			badPart = m.Content.Bad
		}
		if len(m.Content.Images) > 0 && m.Role != "user" {
			badPart = "image_url parts belong to user messages"
		}
		msg := Message{Role: m.Role, Content: m.Content.Text, Images: m.Content.Images, ImageTypes: m.Content.Types}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			names[c.ID] = c.Function.Name
		}
		if m.Role == "tool" {
			msg.ToolResults = []ToolResult{{CallID: m.ToolCallID, Name: names[m.ToolCallID], Content: m.Content.Text}}
		}
		req.Messages = append(req.Messages, msg)
	}
	// What the API refuses with 400.
	bad := pairCalls(req.Messages)
	if bad == "" {
		bad = badPart
	}
	if bad == "" && req.ToolChoice != "" && len(req.Tools) == 0 {
		bad = "tool_choice is only allowed when tools are specified"
	}
	if bad != "" {
		s.problem("chat/completions: %s", bad)
		writeJSON(w, http.StatusBadRequest, openAIError("invalid_request_error", "", bad))
		return
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
	msg := map[string]any{"role": "assistant", "content": a.Content, "refusal": nil}
	finish := "stop"
	if len(a.ToolCalls) > 0 {
		var calls []map[string]any
		for _, c := range callIDs(OpenAI, a.ToolCalls) {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": firstNonEmpty(c.Arguments, "{}")}})
		}
		msg["tool_calls"], finish = calls, "tool_calls"
		if a.Content == "" {
			msg["content"] = nil
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", time.Now().UnixNano()), "object": "chat.completion",
		"created": time.Now().Unix(), "model": in.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": finish, "logprobs": nil, "message": msg}},
		"usage":   map[string]any{"prompt_tokens": in1, "completion_tokens": out, "total_tokens": in1 + out},
	})
}

func openAIError(typ, code, msg string) map[string]any {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if code != "" {
		e["code"] = code
	}
	return map[string]any{"error": e}
}

// anthropicBlock is one content block of a Messages request: text, tool_use or tool_result
// (whose content is a string or text blocks).
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   content         `json:"content"`
	IsError   bool            `json:"is_error"`
	// Source is an image block's source (base64: media_type and data).
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

// anthropicContent is a message content: a string or an array of blocks.
type anthropicContent []anthropicBlock

func (c *anthropicContent) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = anthropicContent{{Type: "text", Text: s}}
		return nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(b, &blocks); err != nil {
		return fmt.Errorf("content is neither a string nor an array of blocks: %w", err)
	}
	*c = blocks
	return nil
}

// anthropicRequest is the Messages API request (anthropic-sdk-go's MessageNewParams).
type anthropicRequest struct {
	Model     string  `json:"model"`
	MaxTokens int     `json:"max_tokens"`
	System    content `json:"system,omitempty"`
	Messages  []struct {
		Role    string           `json:"role"`
		Content anthropicContent `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"input_schema"`
	} `json:"tools,omitempty"`
	ToolChoice *struct {
		Type string `json:"type"`
	} `json:"tool_choice,omitempty"`
	Stream bool `json:"stream,omitempty"`
}

// anthropicMessage is one request message, provider-neutral; bad says what the API refuses
// about its blocks.
func anthropicMessage(role string, blocks anthropicContent, names map[string]string) (m Message, bad string) {
	m.Role = role
	var text strings.Builder
	seenOther := false
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
			seenOther = true
		case "tool_use":
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
			names[b.ID] = b.Name
			var input map[string]any
			if json.Unmarshal(b.Input, &input) != nil || input == nil {
				bad = "tool_use.input must be an object"
			}
		case "tool_result":
			if seenOther {
				bad = "tool_result blocks must come first in the content of a user turn"
			}
			if role != "user" {
				bad = "tool_result blocks belong to user turns"
			}
			m.ToolResults = append(m.ToolResults, ToolResult{CallID: b.ToolUseID, Name: names[b.ToolUseID], Content: string(b.Content), IsError: b.IsError})
			text.WriteString(string(b.Content))
		case "image":
			seenOther = true
			if role != "user" {
				bad = "image blocks belong to user turns"
			}
			if b.Source == nil || b.Source.Type != "base64" {
				bad = "image.source must be a base64 source here"
				continue
			}
			switch b.Source.MediaType {
			case "image/jpeg", "image/png", "image/gif", "image/webp":
			default:
				bad = fmt.Sprintf("image.source.media_type %q is not one of image/jpeg, image/png, image/gif, image/webp", b.Source.MediaType)
			}
			if _, err := base64.StdEncoding.DecodeString(b.Source.Data); err != nil {
				bad = "image.source.data is not base64"
			}
			m.Images, m.ImageTypes = append(m.Images, b.Source.Data), append(m.ImageTypes, b.Source.MediaType)
		default:
			seenOther = true
		}
	}
	m.Content = text.String()
	return m, bad
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
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	if in.ToolChoice != nil {
		req.ToolChoice = in.ToolChoice.Type
	}
	// What the API refuses with 400.
	var bad string
	names := map[string]string{}
	toolBlocks := false
	for _, m := range in.Messages {
		msg, why := anthropicMessage(m.Role, m.Content, names)
		bad = firstNonEmpty(bad, why)
		toolBlocks = toolBlocks || len(msg.ToolCalls) > 0 || len(msg.ToolResults) > 0
		req.Messages = append(req.Messages, msg)
	}
	bad = firstNonEmpty(bad, pairCalls(req.Messages))
	if toolBlocks && len(req.Tools) == 0 {
		bad = firstNonEmpty(bad, "Requests which include `tool_use` or `tool_result` blocks must define tools.")
	}
	if bad != "" {
		s.problem("messages: %s", bad)
		writeJSON(w, http.StatusBadRequest, anthropicError("invalid_request_error", bad))
		return
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
	blocks := []map[string]any{}
	if a.Content != "" || len(a.ToolCalls) == 0 {
		blocks = append(blocks, map[string]any{"type": "text", "text": a.Content})
	}
	stop := "end_turn"
	for _, c := range callIDs(Anthropic, a.ToolCalls) {
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": s.argumentsObject(c)})
		stop = "tool_use"
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": fmt.Sprintf("msg_%d", time.Now().UnixNano()), "type": "message", "role": "assistant", "model": in.Model,
		"content": blocks, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": tokens(a.PromptTokens, req.Text()), "output_tokens": tokens(a.CompletionTokens, a.Content)},
	})
}

func anthropicError(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}
