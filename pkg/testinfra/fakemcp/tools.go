package fakemcp

import "github.com/google/jsonschema-go/jsonschema"

// Prop is one input property of a tool.
type Prop struct {
	Name string
	// Type is the JSON Schema type: string, number, boolean, object or array.
	Type string
	// Items is the element type of an array.
	Items string
	// Props and Required describe an object's properties.
	Props    []Prop
	Required []string
}

// Tool is one tool of the bridge: its name, a short description of ours and its input schema.
type Tool struct {
	Name        string
	Description string
	Props       []Prop
	Required    []string
}

// Tools are the tools of the MCP Chrome bridge (hangwin/mcp-chrome), in its order, with the
// input schemas its shared package publishes (npm chrome-mcp-shared, TOOL_SCHEMAS, built from
// packages/shared/src/tools.ts; the version is pinned in tools/npm/package.json): names,
// property types and required properties. The descriptions are ours. TestToolsAreThePublished
// checks the list against the installed package.
var Tools = []Tool{
	{Name: "get_windows_and_tabs", Description: "List open windows and tabs"},
	{Name: "chrome_navigate", Description: "Open a URL or refresh the current tab", Props: []Prop{
		{Name: "url", Type: "string"}, {Name: "newWindow", Type: "boolean"},
		{Name: "width", Type: "number"}, {Name: "height", Type: "number"}, {Name: "refresh", Type: "boolean"},
	}},
	{Name: "chrome_screenshot", Description: "Capture the page or one element", Props: []Prop{
		{Name: "name", Type: "string"}, {Name: "selector", Type: "string"},
		{Name: "width", Type: "number"}, {Name: "height", Type: "number"},
		{Name: "storeBase64", Type: "boolean"}, {Name: "fullPage", Type: "boolean"}, {Name: "savePng", Type: "boolean"},
	}},
	{Name: "chrome_close_tabs", Description: "Close tabs", Props: []Prop{
		{Name: "tabIds", Type: "array", Items: "number"}, {Name: "url", Type: "string"},
	}},
	{Name: "chrome_go_back_or_forward", Description: "Move in the tab's history", Props: []Prop{
		{Name: "isForward", Type: "boolean"},
	}},
	{Name: "chrome_get_web_content", Description: "Text or HTML of the page or one element", Props: []Prop{
		{Name: "url", Type: "string"}, {Name: "htmlContent", Type: "boolean"},
		{Name: "textContent", Type: "boolean"}, {Name: "selector", Type: "string"},
	}},
	{Name: "chrome_click_element", Description: "Click an element or a viewport point", Props: []Prop{
		{Name: "selector", Type: "string"},
		{Name: "coordinates", Type: "object", Props: []Prop{{Name: "x", Type: "number"}, {Name: "y", Type: "number"}}, Required: []string{"x", "y"}},
		{Name: "waitForNavigation", Type: "boolean"}, {Name: "timeout", Type: "number"},
	}},
	{Name: "chrome_fill_or_select", Description: "Fill an input or choose an option", Props: []Prop{
		{Name: "selector", Type: "string"}, {Name: "value", Type: "string"},
	}, Required: []string{"selector", "value"}},
	{Name: "chrome_get_interactive_elements", Description: "List the page's interactive elements", Props: []Prop{
		{Name: "textQuery", Type: "string"}, {Name: "selector", Type: "string"}, {Name: "includeCoordinates", Type: "boolean"},
	}},
	{Name: "chrome_network_request", Description: "Send a request with the browser's context", Props: []Prop{
		{Name: "url", Type: "string"}, {Name: "method", Type: "string"}, {Name: "headers", Type: "object"},
		{Name: "body", Type: "string"}, {Name: "timeout", Type: "number"},
	}, Required: []string{"url"}},
	{Name: "chrome_network_debugger_start", Description: "Start capturing requests with bodies", Props: []Prop{{Name: "url", Type: "string"}}},
	{Name: "chrome_network_debugger_stop", Description: "Stop capturing and return the requests"},
	{Name: "chrome_network_capture_start", Description: "Start capturing requests without bodies", Props: []Prop{{Name: "url", Type: "string"}}},
	{Name: "chrome_network_capture_stop", Description: "Stop capturing and return the requests"},
	{Name: "chrome_keyboard", Description: "Press keys", Props: []Prop{
		{Name: "keys", Type: "string"}, {Name: "selector", Type: "string"}, {Name: "delay", Type: "number"},
	}, Required: []string{"keys"}},
	{Name: "chrome_history", Description: "Search the browsing history", Props: []Prop{
		{Name: "text", Type: "string"}, {Name: "startTime", Type: "string"}, {Name: "endTime", Type: "string"},
		{Name: "maxResults", Type: "number"}, {Name: "excludeCurrentTabs", Type: "boolean"},
	}},
	{Name: "chrome_bookmark_search", Description: "Search bookmarks", Props: []Prop{
		{Name: "query", Type: "string"}, {Name: "maxResults", Type: "number"}, {Name: "folderPath", Type: "string"},
	}},
	{Name: "chrome_bookmark_add", Description: "Add a bookmark", Props: []Prop{
		{Name: "url", Type: "string"}, {Name: "title", Type: "string"}, {Name: "parentId", Type: "string"}, {Name: "createFolder", Type: "boolean"},
	}},
	{Name: "chrome_bookmark_delete", Description: "Delete a bookmark", Props: []Prop{
		{Name: "bookmarkId", Type: "string"}, {Name: "url", Type: "string"}, {Name: "title", Type: "string"},
	}},
	{Name: "search_tabs_content", Description: "Search the open tabs' content", Props: []Prop{
		{Name: "query", Type: "string"},
	}, Required: []string{"query"}},
	{Name: "chrome_inject_script", Description: "Inject a content script", Props: []Prop{
		{Name: "url", Type: "string"}, {Name: "type", Type: "string"}, {Name: "jsScript", Type: "string"},
	}, Required: []string{"type", "jsScript"}},
	{Name: "chrome_send_command_to_inject_script", Description: "Send an event to an injected script", Props: []Prop{
		{Name: "tabId", Type: "number"}, {Name: "eventName", Type: "string"}, {Name: "payload", Type: "string"},
	}, Required: []string{"eventName"}},
	{Name: "chrome_console", Description: "Console output of the tab", Props: []Prop{
		{Name: "url", Type: "string"}, {Name: "includeExceptions", Type: "boolean"}, {Name: "maxMessages", Type: "number"},
	}},
}

// Lookup returns the tool named name.
func Lookup(name string) (Tool, bool) {
	for _, t := range Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Schema is the tool's input schema as the bridge lists it.
func (t Tool) Schema() *jsonschema.Schema {
	return objectSchema(t.Props, t.Required)
}

func objectSchema(props []Prop, required []string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, Required: append([]string{}, required...)}
	for _, p := range props {
		s.Properties[p.Name] = p.schema()
	}
	return s
}

func (p Prop) schema() *jsonschema.Schema {
	switch p.Type {
	case "object":
		if len(p.Props) == 0 {
			return &jsonschema.Schema{Type: "object"}
		}
		return objectSchema(p.Props, p.Required)
	case "array":
		return &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: p.Items}}
	}
	return &jsonschema.Schema{Type: p.Type}
}
