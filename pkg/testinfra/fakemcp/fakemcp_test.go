package fakemcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fake bridge lists exactly the tools the bridge's published package declares, each with
// the same input schema (types, properties, required; the prose aside), and Tools keeps the
// package's order.
func TestToolsAreThePublished(t *testing.T) {
	pkg, published := Published(t)
	want := map[string]map[string]any{}
	var order []string
	for _, p := range published {
		want[p.Name] = p.InputSchema
		order = append(order, p.Name)
	}
	var names []string
	for _, tool := range Tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, order) {
		t.Errorf("Tools %v\n%s@%s publishes %v", names, pkg.Name, pkg.Version, order)
	}
	cs := connect(t, start(t, Options{}))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(want) {
		t.Errorf("the fake lists %d tools, %s@%s publishes %d", len(res.Tools), pkg.Name, pkg.Version, len(want))
	}
	for _, lt := range res.Tools {
		schema, ok := want[lt.Name]
		if !ok {
			t.Errorf("the fake lists %s, which %s@%s does not publish", lt.Name, pkg.Name, pkg.Version)
			continue
		}
		b, err := json.Marshal(lt.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var got any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if g, w := Shape(got), Shape(schema); !reflect.DeepEqual(g, w) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			t.Errorf("%s: the fake's schema %s\n%s@%s publishes %s", lt.Name, gb, pkg.Name, pkg.Version, wb)
		}
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
