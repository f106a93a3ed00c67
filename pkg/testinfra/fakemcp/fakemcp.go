// Package fakemcp is a local MCP Chrome bridge for tests: an MCP server built with the
// official Go SDK, served over streamable HTTP, that lists the bridge's tools with the input
// schemas hangwin/mcp-chrome publishes (Tools, checked against its npm package
// chrome-mcp-shared by Published), checks every call's arguments against them, records the
// calls and answers with scripted results.
package fakemcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Call is one tool call as received.
type Call struct {
	Tool string
	Args map[string]any
	// Invalid is the schema violation, when the arguments broke the tool's input schema (the
	// call was then answered with a tool error).
	Invalid string
}

// Handler answers a call with valid arguments.
type Handler func(args map[string]any) *mcp.CallToolResult

// Options tune the server.
type Options struct {
	// ScreenshotAsText answers chrome_screenshot with storeBase64 the way current bridge
	// releases do: a text content holding {"base64Data": ..., "mimeType": ...}. Without it the
	// image comes as an MCP image content.
	ScreenshotAsText bool
}

// Server is a running fake bridge.
type Server struct {
	opts     Options
	mu       sync.Mutex
	calls    []Call
	handlers map[string]Handler
	http     *httptest.Server
	// PNG is the image chrome_screenshot returns.
	PNG []byte
}

// Start serves the fake bridge until Close.
func Start(opts Options) (*Server, error) {
	s := &Server{opts: opts, handlers: map[string]Handler{}}
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 0xd0, G: 0x40, B: 0x20, A: 0xff})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("fakemcp: png: %w", err)
	}
	s.PNG = buf.Bytes()
	srv := mcp.NewServer(&mcp.Implementation{Name: "fake-mcp-chrome-bridge", Version: "1.0.0"}, nil)
	for _, t := range Tools {
		schema := t.Schema()
		resolved, err := schema.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("fakemcp: schema of %s: %w", t.Name, err)
		}
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema}, s.handle(t.Name, resolved))
	}
	s.http = httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	return s, nil
}

// URL is the MCP endpoint.
func (s *Server) URL() string { return s.http.URL + "/mcp" }

// Close stops the server.
func (s *Server) Close() { s.http.Close() }

// Handle scripts the answer of tool; without one the bridge answers as described on Default.
func (s *Server) Handle(tool string, h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[tool] = h
}

// Calls lists the calls received, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Text is a successful result with one text content.
func Text(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// Error is a tool error with one text content, as the bridge reports failures.
func Error(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func (s *Server) handle(name string, schema *jsonschema.Resolved) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := map[string]any{}
		if raw := req.Params.Arguments; len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &args); err != nil {
				return nil, fmt.Errorf("arguments of %s: %w", name, err)
			}
		}
		call := Call{Tool: name, Args: args}
		if err := schema.Validate(args); err != nil {
			call.Invalid = err.Error()
		}
		s.mu.Lock()
		s.calls = append(s.calls, call)
		h := s.handlers[name]
		s.mu.Unlock()
		switch {
		case call.Invalid != "":
			return Error("invalid arguments for " + name + ": " + call.Invalid), nil
		case h != nil:
			return h(args), nil
		}
		return s.Default(name, args), nil
	}
}

// Default is the answer without a script: chrome_screenshot with storeBase64 returns PNG;
// other calls return the bridge's JSON success text.
func (s *Server) Default(tool string, args map[string]any) *mcp.CallToolResult {
	if tool == "chrome_screenshot" && args["storeBase64"] == true {
		if s.opts.ScreenshotAsText {
			b, _ := json.Marshal(map[string]string{"base64Data": base64.StdEncoding.EncodeToString(s.PNG), "mimeType": "image/png"})
			return Text(string(b))
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: s.PNG}}}
	}
	b, _ := json.Marshal(map[string]any{"success": true, "message": tool + " done"})
	return Text(string(b))
}
