package fakemcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fromSource is what hangwin/mcp-chrome's packages/shared/src/tools.ts declares, copied by hand:
// every tool name with its required properties, and the full property list of the tools the
// executor calls.
var fromSource = map[string]struct {
	required []string
	props    []string
}{
	"get_windows_and_tabs":                 {},
	"search_tabs_content":                  {required: []string{"query"}},
	"chrome_navigate":                      {props: []string{"url", "newWindow", "width", "height", "refresh"}},
	"chrome_screenshot":                    {props: []string{"name", "selector", "width", "height", "storeBase64", "fullPage", "savePng"}},
	"chrome_close_tabs":                    {},
	"chrome_switch_tab":                    {required: []string{"tabId"}},
	"chrome_go_back_or_forward":            {},
	"chrome_get_web_content":               {props: []string{"url", "htmlContent", "textContent", "selector"}},
	"chrome_click_element":                 {props: []string{"selector", "coordinates", "waitForNavigation", "timeout"}},
	"chrome_fill_or_select":                {required: []string{"selector", "value"}, props: []string{"selector", "value"}},
	"chrome_get_interactive_elements":      {},
	"chrome_network_capture_start":         {},
	"chrome_network_capture_stop":          {},
	"chrome_network_request":               {required: []string{"url"}},
	"chrome_network_debugger_start":        {},
	"chrome_network_debugger_stop":         {},
	"chrome_keyboard":                      {required: []string{"keys"}, props: []string{"keys", "selector", "delay"}},
	"chrome_history":                       {},
	"chrome_bookmark_search":               {},
	"chrome_bookmark_add":                  {},
	"chrome_bookmark_delete":               {},
	"chrome_inject_script":                 {required: []string{"type", "jsScript"}},
	"chrome_send_command_to_inject_script": {required: []string{"eventName"}},
	"chrome_console":                       {},
	"chrome_upload_file":                   {required: []string{"selector"}},
}

func TestToolsMatchTheBridgeSource(t *testing.T) {
	if len(Tools) != len(fromSource) {
		t.Fatalf("%d tools, the bridge has %d", len(Tools), len(fromSource))
	}
	for _, tool := range Tools {
		want, ok := fromSource[tool.Name]
		if !ok {
			t.Errorf("%s is not a bridge tool", tool.Name)
			continue
		}
		if !slices.Equal(tool.Required, want.required) && (len(tool.Required) != 0 || len(want.required) != 0) {
			t.Errorf("%s: required %v, bridge %v", tool.Name, tool.Required, want.required)
		}
		var names []string
		for _, p := range tool.Props {
			names = append(names, p.Name)
		}
		for _, r := range tool.Required {
			if !slices.Contains(names, r) {
				t.Errorf("%s: required %s has no property", tool.Name, r)
			}
		}
		if want.props != nil && !slices.Equal(names, want.props) {
			t.Errorf("%s: properties %v, bridge %v", tool.Name, names, want.props)
		}
	}
	click, _ := Lookup("chrome_click_element")
	if c := click.Props[1]; c.Type != "object" || !slices.Equal(c.Required, []string{"x", "y"}) {
		t.Errorf("coordinates = %+v", c)
	}
}

func connect(t *testing.T, s *Server) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.URL()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func start(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestListsTheSchemasOverMCP(t *testing.T) {
	cs := connect(t, start(t, Options{}))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(Tools) {
		t.Fatalf("%d tools listed", len(res.Tools))
	}
	for _, lt := range res.Tools {
		b, _ := json.Marshal(lt.InputSchema)
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		tool, _ := Lookup(lt.Name)
		if s.Type != "object" || len(s.Properties) != len(tool.Props) || len(s.Required) != len(tool.Required) {
			t.Errorf("%s: listed schema %s", lt.Name, b)
		}
	}
}

func TestRecordsCallsAndChecksArguments(t *testing.T) {
	s := start(t, Options{})
	cs := connect(t, s)
	ctx := context.Background()
	s.Handle("chrome_get_web_content", func(args map[string]any) *mcp.CallToolResult {
		return Text("content of " + args["selector"].(string))
	})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "chrome_get_web_content", Arguments: map[string]any{"selector": "h1", "textContent": true}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "content of h1" {
		t.Fatalf("get content: %v %v", res, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "chrome_navigate", Arguments: map[string]any{"url": "https://example.test/", "width": "800"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "width") {
		t.Fatalf("string width accepted: %v %v", res, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "chrome_fill_or_select", Arguments: map[string]any{"selector": "#q"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "value") {
		t.Fatalf("fill without value accepted: %v %v", res, err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "chrome_execute_script", Arguments: map[string]any{"script": "1"}}); err == nil {
		t.Fatal("an unknown tool answered")
	}
	calls := s.Calls()
	if len(calls) != 3 || calls[0].Tool != "chrome_get_web_content" || calls[0].Invalid != "" || calls[1].Invalid == "" || calls[2].Invalid == "" {
		t.Fatalf("calls = %+v", calls)
	}
}

func TestScreenshotImage(t *testing.T) {
	for _, asText := range []bool{false, true} {
		s := start(t, Options{ScreenshotAsText: asText})
		cs := connect(t, s)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "chrome_screenshot",
			Arguments: map[string]any{"storeBase64": true, "savePng": false}})
		if err != nil || res.IsError || len(res.Content) != 1 {
			t.Fatalf("screenshot: %v %v", res, err)
		}
		var data []byte
		switch c := res.Content[0].(type) {
		case *mcp.ImageContent:
			if asText || c.MIMEType != "image/png" {
				t.Fatalf("image content with text option or mime %s", c.MIMEType)
			}
			data = c.Data
		case *mcp.TextContent:
			var v struct{ Base64Data, MimeType string }
			if !asText || json.Unmarshal([]byte(c.Text), &v) != nil || v.MimeType != "image/png" {
				t.Fatalf("text = %s", c.Text)
			}
			if data, err = base64.StdEncoding.DecodeString(v.Base64Data); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := png.Decode(bytes.NewReader(data)); err != nil || !bytes.Equal(data, s.PNG) {
			t.Fatalf("not the PNG: %v", err)
		}
	}
}
