// Package archcheck enforces the import rules of ARCHITECTURE.md and keeps the module graph
// from drifting: it lists every package of the workspace's modules with `go list -deps -json`
// and checks each against the rule table (rules.go), and it fails when two go.mod files of the
// workspace require different versions of one module.
package archcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Prefix is the module path prefix of our code; rule patterns without a dot in their first
// element are relative to it.
const Prefix = "github.com/picoclaw-suite/picoclaw/"

// Check runs every check on the workspace at root and returns the problems found, one line
// each, sorted.
func Check(root string) ([]string, error) {
	mods, err := workspaceModules(root)
	if err != nil {
		return nil, err
	}
	drift, err := versionDrift(root, mods)
	if err != nil {
		return nil, err
	}
	pkgs, err := listPackages(root, mods)
	if err != nil {
		return nil, err
	}
	problems := append(drift, checkImports(pkgs, Rules)...)
	sort.Strings(problems)
	return problems, nil
}

func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	// The workspace is the one at dir (a test points it at a fixture), never one set outside.
	cmd.Env = append(os.Environ(), "GOWORK=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// workspaceModules returns the module directories go.work uses, relative to root.
func workspaceModules(root string) ([]string, error) {
	out, err := goCmd(root, "work", "edit", "-json")
	if err != nil {
		return nil, err
	}
	var w struct{ Use []struct{ DiskPath string } }
	if err := json.Unmarshal(out, &w); err != nil {
		return nil, fmt.Errorf("go.work: %w", err)
	}
	var dirs []string
	for _, u := range w.Use {
		dirs = append(dirs, filepath.ToSlash(filepath.Clean(u.DiskPath)))
	}
	return dirs, nil
}

// versionDrift reports every module that two go.mod files require at different versions.
// Each module builds alone too (GOWORK=off, the images), so a difference would mean the
// workspace tests a graph no binary is built with.
func versionDrift(root string, mods []string) ([]string, error) {
	seen := map[string]map[string][]string{} // module -> version -> go.mod files
	for _, m := range mods {
		gomod := filepath.ToSlash(filepath.Join(m, "go.mod"))
		out, err := goCmd(root, "mod", "edit", "-json", gomod)
		if err != nil {
			return nil, err
		}
		var f struct {
			Require []struct{ Path, Version string }
		}
		if err := json.Unmarshal(out, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", gomod, err)
		}
		for _, r := range f.Require {
			if strings.HasPrefix(r.Path, Prefix) {
				continue
			}
			if seen[r.Path] == nil {
				seen[r.Path] = map[string][]string{}
			}
			seen[r.Path][r.Version] = append(seen[r.Path][r.Version], gomod)
		}
	}
	var problems []string
	for path, byVersion := range seen {
		if len(byVersion) < 2 {
			continue
		}
		var parts []string
		for v, files := range byVersion {
			sort.Strings(files)
			parts = append(parts, fmt.Sprintf("%s in %s", v, strings.Join(files, ", ")))
		}
		sort.Strings(parts)
		problems = append(problems, fmt.Sprintf("go.mod drift: %s is required at different versions: %s (align them: go get %s@<one version> in each module, then go mod tidy)", path, strings.Join(parts, "; "), path))
	}
	return problems, nil
}

// Package is what the import checks need of `go list -json`.
type Package struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
	Standard     bool
}

// listPackages lists the packages of every module with their dependencies (one go list
// over the whole workspace).
func listPackages(root string, mods []string) (map[string]*Package, error) {
	args := []string{"list", "-e", "-deps", "-test=false", "-json=ImportPath,Imports,TestImports,XTestImports,Deps,Standard"}
	for _, m := range mods {
		args = append(args, "./"+m+"/...")
	}
	out, err := goCmd(root, args...)
	if err != nil {
		return nil, err
	}
	pkgs := map[string]*Package{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs[p.ImportPath] = &p
	}
	return pkgs, nil
}
