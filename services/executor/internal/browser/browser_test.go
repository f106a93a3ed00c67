package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakemcp"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/npmtools"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

func op(action, target, content string, meta map[string]string) patch.Operation {
	return patch.Operation{Type: patch.TypeBrowser, Action: action, Target: target, Content: content, Metadata: meta}
}

func defaults(t *testing.T) Tools {
	t.Helper()
	tools, err := ResolveTools(nil)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

func TestPlan(t *testing.T) {
	tests := []struct {
		op   patch.Operation
		tool string
		want map[string]any
	}{
		{op("chrome_navigate", "https://example.com", "", map[string]string{"width": "1024", "newWindow": "true"}), "chrome_navigate",
			map[string]any{"url": "https://example.com", "width": 1024.0, "newWindow": true}},
		{op("chrome_click_element", "#ok", "", map[string]string{"waitForNavigation": "true"}), "chrome_click_element",
			map[string]any{"selector": "#ok", "waitForNavigation": true}},
		{op("chrome_click_element", "", "", map[string]string{"x": "10", "y": "20.5"}), "chrome_click_element",
			map[string]any{"coordinates": map[string]any{"x": 10.0, "y": 20.5}}},
		{op("chrome_click", "#ok", "", nil), "chrome_click_element", map[string]any{"selector": "#ok"}},
		{op("chrome_fill_or_select", "#q", "tea", nil), "chrome_fill_or_select", map[string]any{"selector": "#q", "value": "tea"}},
		{op("chrome_get_web_content", "", "", nil), "chrome_get_web_content", map[string]any{"textContent": true}},
		{op("chrome_get_text", "h1", "", nil), "chrome_get_web_content", map[string]any{"selector": "h1", "textContent": true}},
		{op("chrome_get_web_content", "main", "", map[string]string{"htmlContent": "true"}), "chrome_get_web_content",
			map[string]any{"selector": "main", "htmlContent": true}},
		{op("chrome_screenshot", "main", "", map[string]string{"fullPage": "false"}), "chrome_screenshot",
			map[string]any{"selector": "main", "fullPage": false, "storeBase64": true, "savePng": false}},
		{op("chrome_keyboard", "#q", "Enter", map[string]string{"delay": "50"}), "chrome_keyboard",
			map[string]any{"keys": "Enter", "selector": "#q", "delay": 50.0}},
	}
	tools := defaults(t)
	for _, tt := range tests {
		tool, got, err := tools.Plan(tt.op)
		if err != nil || tool != tt.tool || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %s %v %v, want %s %v", tt.op.Action, tool, got, err, tt.tool, tt.want)
		}
	}
}

func TestPlanRefuses(t *testing.T) {
	tools := defaults(t)
	for _, o := range []patch.Operation{
		op("chrome_navigate", "", "", nil),
		op("chrome_click_element", "", "", nil),
		op("chrome_click_element", "#a", "", map[string]string{"x": "1"}),
		op("chrome_fill_or_select", "", "v", nil),
		op("chrome_keyboard", "", " ", nil),
		op("chrome_navigate", "https://a.test", "", map[string]string{"width": "wide"}),
		op("chrome_navigate", "https://a.test", "", map[string]string{"width": "NaN"}),
		op("chrome_navigate", "https://a.test", "", map[string]string{"refresh": "true"}),
		op("chrome_screenshot", "", "", map[string]string{"storeBase64": "false"}),
		op("chrome_execute_script", "", "return 1", nil),
		op("chrome_inject_script", "", "1", nil),
	} {
		if _, _, err := tools.Plan(o); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("%s %v: err = %v", o.Action, o.Metadata, err)
		}
	}
}

// Every action a patch may carry has a tool, and the table holds nothing a patch cannot ask.
func TestTableCoversThePatchActions(t *testing.T) {
	tools := defaults(t)
	var canonical []string
	for _, a := range patch.BrowserActions() {
		c := patch.CanonicalBrowserAction(a)
		if _, ok := tools[c]; !ok {
			t.Errorf("%s (%s) has no tool", a, c)
		}
		canonical = append(canonical, c)
	}
	for action, tool := range tools {
		if !slices.Contains(canonical, action) {
			t.Errorf("table action %s is not a patch action", action)
		}
		if _, ok := fakemcp.Lookup(tool); !ok {
			t.Errorf("%s calls %s, which the bridge does not have", action, tool)
		}
	}
}

// Every tool the table calls is one the bridge's published package declares, and every
// argument the executor sends is a property of that tool's published input schema, of its
// type, with the required ones always there: for each action with no metadata and with every
// metadata key it passes on.
func TestTableMatchesThePublishedSchemas(t *testing.T) {
	pkg, published := fakemcp.Published(t)
	schemas := map[string]map[string]any{}
	for _, p := range published {
		schemas[p.Name] = p.InputSchema
	}
	tools := defaults(t)
	sample := map[string]string{"string": "s", "boolean": "true", "number": "2"}
	for _, b := range table {
		schema, ok := schemas[b.tool]
		if !ok {
			t.Errorf("%s calls %s, which %s@%s does not publish", b.action, b.tool, pkg.Name, pkg.Version)
			continue
		}
		target := "#a"
		if b.action == patch.ActionChromeNavigate {
			target = "https://example.test/"
		}
		all := map[string]string{}
		for k, typ := range b.meta {
			all[k] = sample[typ]
		}
		for _, meta := range []map[string]string{nil, all} {
			tool, args, err := tools.Plan(op(b.action, target, "Enter", meta))
			if err != nil || tool != b.tool {
				t.Errorf("%s %v: %s %v", b.action, meta, tool, err)
				continue
			}
			for _, p := range conforms(b.tool, args, schema) {
				t.Errorf("%s %v: %s (%s@%s)", b.action, meta, p, pkg.Name, pkg.Version)
			}
		}
	}
}

// conforms lists how v breaks schema (a published input schema decoded from JSON): a value of
// another JSON type, a property the schema does not declare, a required one missing.
func conforms(path string, v any, schema map[string]any) []string {
	typ, _ := schema["type"].(string)
	var got string
	switch v.(type) {
	case string:
		got = "string"
	case bool:
		got = "boolean"
	case float64, int:
		got = "number"
	case map[string]any:
		got = "object"
	case []any:
		got = "array"
	}
	if typ != "" && got != typ {
		return []string{fmt.Sprintf("%s is %s (%v), the schema wants %s", path, got, v, typ)}
	}
	var probs []string
	switch x := v.(type) {
	case map[string]any:
		props, declared := schema["properties"].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if !declared {
				break
			}
			ps, ok := props[k].(map[string]any)
			if !ok {
				probs = append(probs, fmt.Sprintf("%s.%s is not a property of the schema", path, k))
				continue
			}
			probs = append(probs, conforms(path+"."+k, x[k], ps)...)
		}
		required, _ := schema["required"].([]any)
		for _, r := range required {
			if _, ok := x[r.(string)]; !ok {
				probs = append(probs, fmt.Sprintf("%s lacks the required %s", path, r))
			}
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		for i, e := range x {
			if items != nil {
				probs = append(probs, conforms(fmt.Sprintf("%s[%d]", path, i), e, items)...)
			}
		}
	}
	return probs
}

func TestResolveTools(t *testing.T) {
	tools, err := ResolveTools(map[string]string{"click": "click_v2", "get_content": " chrome_read "})
	if err != nil {
		t.Fatal(err)
	}
	if tools[patch.ActionChromeClickElement] != "click_v2" || tools[patch.ActionChromeGetWebContent] != "chrome_read" ||
		tools[patch.ActionChromeNavigate] != "chrome_navigate" {
		t.Fatalf("tools = %v", tools)
	}
	if tool, _, _ := tools.Plan(op("chrome_click", "#a", "", nil)); tool != "click_v2" {
		t.Fatalf("alias calls %s", tool)
	}
	for _, bad := range []map[string]string{{"execute_script": "chrome_inject_script"}, {"click": ""}, {"fill": "a b"}} {
		if _, err := ResolveTools(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func startFake(t *testing.T, opts fakemcp.Options) *fakemcp.Server {
	t.Helper()
	s, err := fakemcp.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// The executor calls the bridge's tools with the arguments its schemas accept.
func TestCallsTheBridgeTools(t *testing.T) {
	for _, asText := range []bool{false, true} {
		bridge := startFake(t, fakemcp.Options{ScreenshotAsText: asText})
		bridge.Handle("chrome_get_web_content", func(map[string]any) *mcp.CallToolResult { return fakemcp.Text("Example Domain") })
		c := New(Config{URL: bridge.URL(), Timeout: 5 * time.Second, Version: "test"})
		ops := []patch.Operation{
			op("chrome_navigate", "https://example.test/", "", map[string]string{"width": "1280"}),
			op("chrome_click", "#more", "", nil),
			op("chrome_click_element", "", "", map[string]string{"x": "3", "y": "4"}),
			op("chrome_fill_or_select", "#q", "tea", nil),
			op("chrome_keyboard", "#q", "Enter", nil),
			op("chrome_get_text", "h1", "", nil),
			op("chrome_screenshot", "", "", map[string]string{"fullPage": "true"}),
		}
		var outs []Output
		for _, o := range ops {
			out, err := c.Call(context.Background(), o)
			if err != nil {
				t.Fatalf("%s: %v", o.Action, err)
			}
			outs = append(outs, out)
		}
		_ = c.Close()
		calls := bridge.Calls()
		want := []fakemcp.Call{
			{Tool: "chrome_navigate", Args: map[string]any{"url": "https://example.test/", "width": 1280.0}},
			{Tool: "chrome_click_element", Args: map[string]any{"selector": "#more"}},
			{Tool: "chrome_click_element", Args: map[string]any{"coordinates": map[string]any{"x": 3.0, "y": 4.0}}},
			{Tool: "chrome_fill_or_select", Args: map[string]any{"selector": "#q", "value": "tea"}},
			{Tool: "chrome_keyboard", Args: map[string]any{"keys": "Enter", "selector": "#q"}},
			{Tool: "chrome_get_web_content", Args: map[string]any{"selector": "h1", "textContent": true}},
			{Tool: "chrome_screenshot", Args: map[string]any{"fullPage": true, "storeBase64": true, "savePng": false}},
		}
		if !reflect.DeepEqual(calls, want) {
			t.Fatalf("calls = %+v\nwant    %+v", calls, want)
		}
		if outs[5].Text != "Example Domain" || !strings.Contains(outs[0].Text, `"success":true`) {
			t.Fatalf("outputs = %+v", outs)
		}
		if img := outs[6].Image; img == nil || img.MIMEType != "image/png" || !slices.Equal(img.Data, bridge.PNG) {
			t.Fatalf("screenshot = %+v", outs[6])
		}
	}
}

func TestToolErrorsAndMissingImage(t *testing.T) {
	bridge := startFake(t, fakemcp.Options{})
	bridge.Handle("chrome_click_element", func(map[string]any) *mcp.CallToolResult { return fakemcp.Error("Element not found: #missing") })
	bridge.Handle("chrome_screenshot", func(map[string]any) *mcp.CallToolResult { return fakemcp.Text(`{"success":true}`) })
	c := New(Config{URL: bridge.URL(), Timeout: 5 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Call(context.Background(), op("chrome_click_element", "#missing", "", nil)); err == nil ||
		!strings.Contains(err.Error(), "chrome_click_element: Element not found: #missing") {
		t.Fatalf("err = %v", err)
	}
	if _, err := c.Call(context.Background(), op("chrome_screenshot", "", "", nil)); err == nil || !strings.Contains(err.Error(), "no image") {
		t.Fatalf("err = %v", err)
	}
	if _, err := New(Config{}).Call(context.Background(), op("chrome_navigate", "https://a.test", "", nil)); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("no bridge: %v", err)
	}
}

// Protocol conformance against a server written the SDK's ordinary way: typed inputs whose
// schemas the SDK infers and checks on every call, the wire format of another bridge build.
type navigateIn struct {
	URL       string  `json:"url,omitempty"`
	NewWindow bool    `json:"newWindow,omitempty"`
	Width     float64 `json:"width,omitempty"`
	Height    float64 `json:"height,omitempty"`
	Refresh   bool    `json:"refresh,omitempty"`
}

type coordinates struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

type clickIn struct {
	Selector          string       `json:"selector,omitempty"`
	Coordinates       *coordinates `json:"coordinates,omitempty"`
	WaitForNavigation bool         `json:"waitForNavigation,omitempty"`
	Timeout           float64      `json:"timeout,omitempty"`
}

type screenshotIn struct {
	Name        string  `json:"name,omitempty"`
	Selector    string  `json:"selector,omitempty"`
	Width       float64 `json:"width,omitempty"`
	Height      float64 `json:"height,omitempty"`
	StoreBase64 bool    `json:"storeBase64,omitempty"`
	FullPage    bool    `json:"fullPage,omitempty"`
	SavePng     bool    `json:"savePng,omitempty"`
}

func TestConformsToAnSDKServer(t *testing.T) {
	png := startFake(t, fakemcp.Options{}).PNG
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk-bridge", Version: "1"}, nil)
	var got []string
	mcp.AddTool(s, &mcp.Tool{Name: "chrome_navigate"}, func(_ context.Context, _ *mcp.CallToolRequest, in navigateIn) (*mcp.CallToolResult, any, error) {
		got = append(got, "navigate "+in.URL)
		return fakemcp.Text("ok"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "chrome_click_element"}, func(_ context.Context, _ *mcp.CallToolRequest, in clickIn) (*mcp.CallToolResult, any, error) {
		if in.Coordinates != nil {
			got = append(got, "click at", in.Selector)
		}
		return fakemcp.Text("clicked"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "chrome_screenshot"}, func(_ context.Context, _ *mcp.CallToolRequest, in screenshotIn) (*mcp.CallToolResult, any, error) {
		if !in.StoreBase64 || in.SavePng {
			return fakemcp.Error("want storeBase64 without savePng"), nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: png}}}, nil, nil
	})
	srv := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)

	c := New(Config{URL: hs.URL + "/mcp", Timeout: 5 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if _, err := c.Call(ctx, op("chrome_navigate", "https://example.test/", "", map[string]string{"width": "800", "newWindow": "false"})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(ctx, op("chrome_click_element", "", "", map[string]string{"x": "1", "y": "2", "timeout": "100"})); err != nil {
		t.Fatal(err)
	}
	out, err := c.Call(ctx, op("chrome_screenshot", "", "", nil))
	if err != nil || out.Image == nil || !slices.Equal(out.Image.Data, png) {
		t.Fatalf("screenshot: %+v %v", out, err)
	}
	if !slices.Equal(got, []string{"navigate https://example.test/", "click at", ""}) {
		t.Fatalf("server saw %q", got)
	}
	// A tool the server does not list is an error, not an empty answer.
	if _, err := c.Call(ctx, op("chrome_keyboard", "", "Enter", nil)); err == nil {
		t.Fatal("a tool the server lacks answered")
	}
}

// Protocol conformance against an off-the-shelf server: the MCP project's reference server
// (npm @modelcontextprotocol/server-everything at the version tools/npm/package.json pins:
// the TypeScript SDK, Streamable HTTP with sessions and SSE answers). The executor's client
// initializes, lists the tools, calls one that answers text and one that answers an image
// between two texts, taken the way a screenshot is (the screenshot action pointed at it as
// executor.browser.tools would); a tool error and a tool the server lacks are errors.
func TestConformsToTheReferenceServer(t *testing.T) {
	url := npmtools.RunServerEverything(t)
	tools, err := ResolveTools(map[string]string{"screenshot": "get-tiny-image", "keyboard": "chrome_keyboard_missing"})
	if err != nil {
		t.Fatal(err)
	}
	c := New(Config{URL: url, Timeout: 30 * time.Second, Version: "test", Tools: tools})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()

	names, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, "echo") || !slices.Contains(names, "get-tiny-image") {
		t.Fatalf("tools/list: %v", names)
	}
	res, err := c.call(ctx, "echo", map[string]any{"message": "こんにちは"})
	if err != nil || res.IsError || render(res) != "Echo: こんにちは" {
		t.Fatalf("echo: %+v %v", res, err)
	}
	out, err := c.Call(ctx, op("chrome_screenshot", "", "", nil))
	if err != nil || out.Image == nil || out.Image.MIMEType != "image/png" {
		t.Fatalf("image result: %+v %v", out, err)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(out.Image.Data)); err != nil || cfg.Width == 0 {
		t.Fatalf("not a PNG: %v", err)
	}
	// The server refuses arguments its schema does not accept with a tool error.
	if res, err := c.call(ctx, "echo", map[string]any{"message": 42}); err != nil || !res.IsError || render(res) == "" {
		t.Fatalf("echo with a number: %+v %v", res, err)
	}
	if _, err := c.Call(ctx, op("chrome_keyboard", "", "Enter", nil)); err == nil {
		t.Fatal("a tool the server lacks answered")
	}
}
