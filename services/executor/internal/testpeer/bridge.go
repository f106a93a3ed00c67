// Package testpeer holds test helpers of the executor that stand for things outside it: a local
// MCP Chrome bridge speaking the real protocol, and process inspection through /proc. Approval
// is never faked here: tests run the real service (services/approval/approvaltest).
package testpeer

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bridge is a local MCP Chrome bridge for tests, built with the official MCP Go SDK and served
// over streamable HTTP. It exposes the chrome_* tool names over a tiny in-memory "browser":
// pages are maps from CSS selector to text.
type Bridge struct {
	mu      sync.Mutex
	pages   map[string]map[string]string
	current string
	calls   []string
	server  *httptest.Server
}

type urlIn struct {
	URL string `json:"url"`
}

type selectorIn struct {
	Selector string `json:"selector,omitempty"`
}

type scriptIn struct {
	Script string `json:"script"`
}

// StartBridge serves a bridge with the given pages until Close.
func StartBridge(pages map[string]map[string]string) *Bridge {
	b := &Bridge{pages: pages}
	s := mcp.NewServer(&mcp.Implementation{Name: "test-chrome-bridge", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "chrome_navigate", Description: "open a URL"}, b.navigate)
	mcp.AddTool(s, &mcp.Tool{Name: "chrome_click", Description: "click an element"}, b.click)
	mcp.AddTool(s, &mcp.Tool{Name: "chrome_get_text", Description: "text of an element or the page"}, b.getText)
	mcp.AddTool(s, &mcp.Tool{Name: "chrome_screenshot", Description: "PNG of the page"}, b.screenshot)
	mcp.AddTool(s, &mcp.Tool{Name: "chrome_execute_script", Description: "run JavaScript"}, b.executeScript)
	b.server = httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	return b
}

// URL is the MCP endpoint.
func (b *Bridge) URL() string { return b.server.URL + "/mcp" }

// Close stops the bridge.
func (b *Bridge) Close() { b.server.Close() }

// Calls lists the tool calls received, as "tool arg".
func (b *Bridge) Calls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.calls...)
}

func (b *Bridge) note(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, s)
}

func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func (b *Bridge) navigate(_ context.Context, _ *mcp.CallToolRequest, in urlIn) (*mcp.CallToolResult, any, error) {
	b.note("chrome_navigate " + in.URL)
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.pages[in.URL]; !ok {
		return toolError("net::ERR_NAME_NOT_RESOLVED %s", in.URL), nil, nil
	}
	b.current = in.URL
	return text("navigated to " + in.URL), nil, nil
}

func (b *Bridge) element(sel string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.pages[b.current][sel]
	return t, ok
}

func (b *Bridge) click(_ context.Context, _ *mcp.CallToolRequest, in selectorIn) (*mcp.CallToolResult, any, error) {
	b.note("chrome_click " + in.Selector)
	if _, ok := b.element(in.Selector); !ok {
		return toolError("no element matches %s", in.Selector), nil, nil
	}
	return text("clicked " + in.Selector), nil, nil
}

func (b *Bridge) getText(_ context.Context, _ *mcp.CallToolRequest, in selectorIn) (*mcp.CallToolResult, any, error) {
	b.note("chrome_get_text " + in.Selector)
	sel := in.Selector
	if sel == "" {
		sel = "body"
	}
	t, ok := b.element(sel)
	if !ok {
		return toolError("no element matches %s", sel), nil, nil
	}
	return text(t), nil, nil
}

// pngHeader is the 8-byte PNG signature; enough for a client to see an image arrived.
func pngHeader() []byte { return []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'} }

func (b *Bridge) screenshot(_ context.Context, _ *mcp.CallToolRequest, in selectorIn) (*mcp.CallToolResult, any, error) {
	b.note("chrome_screenshot " + in.Selector)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: pngHeader()}}}, nil, nil
}

func (b *Bridge) executeScript(_ context.Context, _ *mcp.CallToolRequest, in scriptIn) (*mcp.CallToolResult, any, error) {
	b.note("chrome_execute_script " + in.Script)
	return text(fmt.Sprintf("script ran (%d bytes)", len(in.Script))), nil, nil
}
