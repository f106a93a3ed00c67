// Package npmtools finds the npm packages the tests check the suite against: the MCP Chrome
// bridge's published tool schemas and the reference MCP server. tools/npm/package.json pins
// their versions (the one place they are recorded) and `make npm-tools` installs them into
// .tmp/npm (or PICOCLAW_NPM_TOOLS). A test that needs one skips with the command to run when it
// is not installed at the pinned version, and fails instead when PICOCLAW_REQUIRE_INTEGRATION=1
// (CI installs them first).
package npmtools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// EnvDir names the directory the packages were installed into (holding node_modules); the
// default is .tmp/npm under the repository root.
const EnvDir = "PICOCLAW_NPM_TOOLS"

// Package names.
const (
	// ChromeBridgeShared publishes the MCP Chrome bridge's TOOL_SCHEMAS (hangwin/mcp-chrome,
	// packages/shared).
	ChromeBridgeShared = "chrome-mcp-shared"
	// ServerEverything is the MCP project's reference server exercising the whole protocol.
	ServerEverything = "@modelcontextprotocol/server-everything"
)

// Package is an installed npm package at its pinned version.
type Package struct {
	Name    string
	Version string
	// Dir is the package's directory in node_modules.
	Dir string
}

// Require returns the installed package name; see the package comment for a missing one.
func Require(t testinfra.TB, name string) Package {
	t.Helper()
	p, err := find(name)
	if err != nil {
		unavailable(t, err)
	}
	return p
}

// Node returns the path of the node binary.
func Node(t testinfra.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, fmt.Errorf("node is not installed: %w", err))
	}
	return node
}

func unavailable(t testinfra.TB, err error) {
	t.Helper()
	if testinfra.Required() {
		t.Fatalf("npmtools: %v (required: %s=1); run `make npm-tools`", err, testinfra.EnvRequireIntegration)
		return
	}
	t.Skipf("npmtools: skipping, %v; run `make npm-tools` (or set %s=1 to make this a failure)", err, testinfra.EnvRequireIntegration)
}

func find(name string) (Package, error) {
	root, err := repoRoot()
	if err != nil {
		return Package{}, err
	}
	var pins struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := readJSON(filepath.Join(root, "tools", "npm", "package.json"), &pins); err != nil {
		return Package{}, err
	}
	want, ok := pins.Dependencies[name]
	if !ok {
		return Package{}, fmt.Errorf("%s is not pinned in tools/npm/package.json", name)
	}
	dir := os.Getenv(EnvDir)
	if dir == "" {
		dir = filepath.Join(root, ".tmp", "npm")
	}
	p := Package{Name: name, Dir: filepath.Join(dir, "node_modules", filepath.FromSlash(name))}
	var installed struct {
		Version string `json:"version"`
	}
	if err := readJSON(filepath.Join(p.Dir, "package.json"), &installed); err != nil {
		return Package{}, fmt.Errorf("%s@%s is not installed in %s: %w", name, want, dir, err)
	}
	if installed.Version != want {
		return Package{}, fmt.Errorf("%s in %s is %s, tools/npm/package.json pins %s", name, dir, installed.Version, want)
	}
	p.Version = installed.Version
	return p, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// repoRoot is the directory holding go.work, from the working directory upwards.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no go.work above " + wd)
		}
	}
}
