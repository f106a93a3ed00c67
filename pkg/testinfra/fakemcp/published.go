package fakemcp

import (
	"encoding/json"
	"os/exec"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/npmtools"
)

// PublishedTool is one entry of the bridge's published TOOL_SCHEMAS.
type PublishedTool struct {
	Name string `json:"name"`
	// InputSchema is the JSON Schema as published (descriptions included).
	InputSchema map[string]any `json:"inputSchema"`
}

// Published reads TOOL_SCHEMAS from the bridge's npm package (npmtools.ChromeBridgeShared at
// the version tools/npm/package.json pins), the list its MCP server registers. Without the
// package or node the test skips, or fails under PICOCLAW_REQUIRE_INTEGRATION=1.
func Published(t testinfra.TB) (npmtools.Package, []PublishedTool) {
	t.Helper()
	pkg := npmtools.Require(t, npmtools.ChromeBridgeShared)
	node := npmtools.Node(t)
	// The package's CommonJS build is plain data plus constants: requiring it runs nothing else.
	cmd := exec.Command(node, "-e", `process.stdout.write(JSON.stringify(require(process.argv[1]).TOOL_SCHEMAS))`, pkg.Dir)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = strings.TrimSpace(string(ee.Stderr))
		}
		t.Fatalf("fakemcp: reading TOOL_SCHEMAS of %s@%s: %v %s", pkg.Name, pkg.Version, err, stderr)
		return pkg, nil
	}
	var tools []PublishedTool
	if err := json.Unmarshal(out, &tools); err != nil || len(tools) == 0 {
		t.Fatalf("fakemcp: TOOL_SCHEMAS of %s@%s: %v (%d tools)", pkg.Name, pkg.Version, err, len(tools))
	}
	return pkg, tools
}

// Shape is a JSON Schema (decoded from JSON) without its prose: types, properties, items and
// required lists, for comparing what two schemas accept. An empty required list or property
// set is the same as none.
func Shape(schema any) any {
	v, ok := schema.(map[string]any)
	if !ok {
		return schema
	}
	out := map[string]any{}
	for k, x := range v {
		switch k {
		case "description", "title":
		case "properties":
			props, _ := x.(map[string]any)
			if len(props) == 0 {
				continue
			}
			shaped := map[string]any{}
			for name, p := range props {
				shaped[name] = Shape(p)
			}
			out[k] = shaped
		case "items":
			out[k] = Shape(x)
		case "required":
			if l, ok := x.([]any); ok && len(l) > 0 {
				out[k] = x
			}
		default:
			out[k] = x
		}
	}
	return out
}
