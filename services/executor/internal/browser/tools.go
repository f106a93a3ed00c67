package browser

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

// binding says how one patch action runs on the bridge: the tool it calls (overridable by
// config under key), how the operation becomes the tool's arguments, and which metadata keys
// pass through as which JSON types. Argument names and types follow the bridge's published
// input schemas (hangwin/mcp-chrome, packages/shared/src/tools.ts, published on npm as
// chrome-mcp-shared: TestTableMatchesThePublishedSchemas checks the table against the version
// tools/npm/package.json pins).
type binding struct {
	key    string
	action string
	tool   string
	meta   map[string]string
	args   func(op patch.Operation, args map[string]any) error
}

// table is the one mapping of patch actions to bridge tools. Aliases of patch.BrowserActions
// resolve to these actions; an action missing here is refused by patch.Parse already.
var table = []binding{
	{key: "navigate", action: patch.ActionChromeNavigate, tool: "chrome_navigate",
		meta: map[string]string{"newWindow": "boolean", "width": "number", "height": "number"},
		args: func(op patch.Operation, a map[string]any) error {
			if op.Target == "" {
				return domain.Fail(domain.ErrInvalid, domain.CodeBrowserNeedsURL, op.Action)
			}
			a["url"] = op.Target
			return nil
		}},
	{key: "click", action: patch.ActionChromeClickElement, tool: "chrome_click_element",
		meta: map[string]string{"waitForNavigation": "boolean", "timeout": "number", patch.MetaX: "number", patch.MetaY: "number"},
		args: func(op patch.Operation, a map[string]any) error {
			x, hasX := a[patch.MetaX]
			y, hasY := a[patch.MetaY]
			delete(a, patch.MetaX)
			delete(a, patch.MetaY)
			switch {
			case hasX && hasY:
				a["coordinates"] = map[string]any{"x": x, "y": y}
			case hasX || hasY:
				return domain.Fail(domain.ErrInvalid, domain.CodeBrowserNeedsXY, op.Action)
			}
			if op.Target != "" {
				a["selector"] = op.Target
			} else if !hasX {
				return domain.Fail(domain.ErrInvalid, domain.CodeBrowserNeedsTarget, op.Action)
			}
			return nil
		}},
	{key: "fill", action: patch.ActionChromeFillOrSelect, tool: "chrome_fill_or_select",
		args: func(op patch.Operation, a map[string]any) error {
			if op.Target == "" {
				return domain.Fail(domain.ErrInvalid, domain.CodeBrowserNeedsSelector, op.Action)
			}
			a["selector"], a["value"] = op.Target, op.Content
			return nil
		}},
	{key: "get_content", action: patch.ActionChromeGetWebContent, tool: "chrome_get_web_content",
		meta: map[string]string{"htmlContent": "boolean", "textContent": "boolean"},
		args: func(op patch.Operation, a map[string]any) error {
			if op.Target != "" {
				a["selector"] = op.Target
			}
			if a["htmlContent"] != true {
				if _, ok := a["textContent"]; !ok {
					a["textContent"] = true
				}
			}
			return nil
		}},
	{key: "screenshot", action: patch.ActionChromeScreenshot, tool: "chrome_screenshot",
		meta: map[string]string{"name": "string", "width": "number", "height": "number", "fullPage": "boolean"},
		args: func(op patch.Operation, a map[string]any) error {
			if op.Target != "" {
				a["selector"] = op.Target
			}
			// The image comes back in the result and is kept with the job; nothing is saved
			// in the browser's downloads.
			a["storeBase64"], a["savePng"] = true, false
			return nil
		}},
	{key: "keyboard", action: patch.ActionChromeKeyboard, tool: "chrome_keyboard",
		meta: map[string]string{"delay": "number"},
		args: func(op patch.Operation, a map[string]any) error {
			if strings.TrimSpace(op.Content) == "" {
				return domain.Fail(domain.ErrInvalid, domain.CodeBrowserNeedsKeys, op.Action)
			}
			a["keys"] = op.Content
			if op.Target != "" {
				a["selector"] = op.Target
			}
			return nil
		}},
}

// ToolKeys are the keys of executor.browser.tools, one per bridge action.
func ToolKeys() []string {
	keys := make([]string, 0, len(table))
	for _, b := range table {
		keys = append(keys, b.key)
	}
	return keys
}

// Tools is the resolved tool name per patch action (aliases resolved by the caller).
type Tools map[string]string

// ResolveTools applies overrides (executor.browser.tools: key -> tool name) to the defaults.
func ResolveTools(overrides map[string]string) (Tools, error) {
	t := Tools{}
	for _, b := range table {
		t[b.action] = b.tool
	}
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		name := strings.TrimSpace(overrides[k])
		i := slices.IndexFunc(table, func(b binding) bool { return b.key == k })
		if i < 0 {
			return nil, fmt.Errorf("unknown key %q (known: %s)", k, strings.Join(ToolKeys(), ", "))
		}
		if name == "" || strings.ContainsAny(name, " \t\r\n/") {
			return nil, fmt.Errorf("%s: invalid tool name %q", k, overrides[k])
		}
		t[table[i].action] = name
	}
	return t, nil
}

// Missing is a browser action whose tool a bridge does not serve.
type Missing struct {
	// Key is the action's key under executor.browser.tools.
	Key  string
	Tool string
	// Overridden: the tool was named by executor.browser.tools, not by the table.
	Overridden bool
}

// Missing lists, in table order, the actions whose tool is not among served (a bridge's
// tools/list); overrides are the executor.browser.tools t was resolved with.
func (t Tools) Missing(served []string, overrides map[string]string) []Missing {
	var out []Missing
	for _, b := range table {
		tool := t[b.action]
		if slices.Contains(served, tool) {
			continue
		}
		_, overridden := overrides[b.key]
		out = append(out, Missing{Key: b.key, Tool: tool, Overridden: overridden})
	}
	return out
}

// Plan maps an operation to the bridge tool and its arguments.
func (t Tools) Plan(op patch.Operation) (string, map[string]any, error) {
	action := patch.CanonicalBrowserAction(op.Action)
	i := slices.IndexFunc(table, func(b binding) bool { return b.action == action })
	tool, ok := t[action]
	if i < 0 || !ok {
		return "", nil, domain.Fail(domain.ErrInvalid, domain.CodeBrowserNoTool, strconv.Quote(op.Action))
	}
	b := table[i]
	args := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(op.Metadata)) {
		v, err := metaValue(b.meta[k], op.Metadata[k])
		if err != nil {
			return "", nil, domain.FailWith(domain.ErrInvalid, err, domain.CodeBrowserArgument, op.Action, k)
		}
		args[k] = v
	}
	if err := b.args(op, args); err != nil {
		return "", nil, err
	}
	return tool, args, nil
}

// metaValue converts a metadata string to the JSON type of the tool's input schema.
func metaValue(typ, v string) (any, error) {
	switch typ {
	case "string":
		return v, nil
	case "boolean":
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("want true or false, got %q", v)
		}
		return b, nil
	case "number":
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("want a number, got %q", v)
		}
		return f, nil
	}
	return nil, fmt.Errorf("not an argument of this action")
}
