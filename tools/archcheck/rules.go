package archcheck

import (
	"fmt"
	"sort"
	"strings"
)

// Rule is one line of the import rule table in ARCHITECTURE.md. Patterns: "x/..." is x and
// everything under it, "*" is one path element; a pattern whose first element has no dot is
// relative to Prefix, and "std:" marks a standard library path.
type Rule struct {
	Name string
	// From are the importers the rule applies to, Except the importers it exempts.
	From, Except []string
	// Forbid are imports the importers must not have. Allow, when set, lists the only
	// packages of ours they may import.
	Forbid, Allow []string
	// Sibling forbids importing another tree matched by the same From pattern (a service
	// importing another service): the importer's own tree is fine, and so are the imports
	// listed in Exempt.
	Sibling bool
	Exempt  []string
	// Transitive checks everything linked into the importer (go list Deps) instead of its
	// direct imports; direct checks include the imports of its tests.
	Transitive bool
}

var (
	openAISDK    = "github.com/openai/openai-go/..."
	anthropicSDK = "github.com/anthropics/anthropic-sdk-go/..."
	// Value packages a domain may use: pure rules and types, no I/O.
	domainValues = []string{"pkg/patch", "pkg/jobid", "pkg/redact", "pkg/llm", "pkg/fault", "pkg/bearer"}
)

// Rules is the table ARCHITECTURE.md shows.
var Rules = []Rule{
	{Name: "pkg never imports services, cmd, e2e or bench", From: []string{"pkg/..."},
		Forbid: []string{"services/...", "cmd/...", "e2e/...", "bench/..."}},
	{Name: "the llm core links no provider SDK and no provider package", From: []string{"pkg/llm"}, Transitive: true,
		Forbid: []string{openAISDK, anthropicSDK, "pkg/llm/openai", "pkg/llm/anthropic", "pkg/llm/ollama", "pkg/llm/providers"}},
	{Name: "heartbeat does not know the llm package (it implements llm.Tracker)", From: []string{"pkg/heartbeat/..."}, Transitive: true,
		Forbid: []string{"pkg/llm/..."}},
	{Name: "a domain imports only pkg value packages", From: []string{"services/*/internal/domain/..."},
		Except: []string{"services/gateway-line/internal/domain/...", "services/gateway-slack/internal/domain/..."},
		Allow:  domainValues},
	{Name: "a gateway domain imports only pkg value packages and pkg/chatlink's action types", From: []string{"services/gateway-line/internal/domain/...", "services/gateway-slack/internal/domain/..."},
		Allow: append([]string{"pkg/chatlink"}, domainValues...)},
	{Name: "a service never imports another service", From: []string{"services/*/..."}, Sibling: true,
		// The heartbeat service's test starts every service's Run to check that each beats
		// only for itself. A service's exported test support (services/<name>/<name>test: the
		// real approval service in-process) is for other services' tests.
		Except: []string{"services/heartbeat/service"}, Exempt: []string{"services/approval/approvaltest"}},
	// The clients speak the providers' wires themselves (pkg/llm/{openai,anthropic}); the
	// SDKs stay out of every binary. The model fakes' tests drive the fakes with the SDKs, so
	// the fakes keep to the vendors' definitions.
	// html/template finds a template's fields and methods by name at run time, so once it is
	// linked the linker keeps every exported method of every type: 7 MB of the embedded binary.
	{Name: "no binary links html/template", From: []string{"cmd/picoclaw", "services/*/cmd/*"}, Transitive: true,
		Forbid: []string{"std:html/template"}},
	{Name: "provider SDKs are imported only by the model fakes' tests", From: []string{"..."}, Except: []string{"pkg/testinfra/fakellm"},
		Forbid: []string{openAISDK, anthropicSDK}},
}

func abs(pattern string) string {
	if std, ok := strings.CutPrefix(pattern, "std:"); ok {
		return std
	}
	first, _, _ := strings.Cut(pattern, "/")
	if pattern == "..." || !strings.Contains(first, ".") {
		if pattern == "..." {
			return Prefix + "..."
		}
		return Prefix + pattern
	}
	return pattern
}

// match reports whether path matches pattern; the second result is the path's prefix matched
// by the pattern up to "/..." (the tree a Sibling rule compares).
func match(pattern, path string) (bool, string) {
	pattern = abs(pattern)
	pe := strings.Split(pattern, "/")
	xe := strings.Split(path, "/")
	for i, p := range pe {
		if p == "..." && i == len(pe)-1 {
			return true, strings.Join(xe[:i], "/")
		}
		if i >= len(xe) || (p != "*" && p != xe[i]) {
			return false, ""
		}
	}
	return len(pe) == len(xe), path
}

func matchAny(patterns []string, path string) bool {
	for _, p := range patterns {
		if ok, _ := match(p, path); ok {
			return true
		}
	}
	return false
}

func ours(path string) bool { return strings.HasPrefix(path, Prefix) }

func short(path string) string { return strings.TrimPrefix(path, Prefix) }

// checkImports applies rules to every package of ours in pkgs.
func checkImports(pkgs map[string]*Package, rules []Rule) []string {
	var names []string
	for path := range pkgs {
		if ours(path) {
			names = append(names, path)
		}
	}
	sort.Strings(names)
	var problems []string
	for _, r := range rules {
		for _, path := range names {
			if !matchAny(r.From, path) || matchAny(r.Except, path) {
				continue
			}
			p := pkgs[path]
			var imports []string
			if r.Transitive {
				imports = p.Deps
			} else {
				imports = uniq(p.Imports, p.TestImports, p.XTestImports)
			}
			for _, imp := range imports {
				if bad, why := r.forbids(path, imp); bad {
					verb := "imports"
					if r.Transitive {
						verb = "links"
					}
					msg := fmt.Sprintf("import rule %q: %s %s %s%s", r.Name, short(path), verb, short(imp), why)
					if r.Transitive {
						if chain := importChain(pkgs, path, imp); len(chain) > 2 {
							msg += " (via " + strings.Join(shortAll(chain[1:len(chain)-1]), " -> ") + ")"
						}
					}
					problems = append(problems, msg)
				}
			}
		}
	}
	return problems
}

func (r Rule) forbids(from, imp string) (bool, string) {
	if matchAny(r.Forbid, imp) {
		return true, ""
	}
	if len(r.Allow) > 0 && ours(imp) && !matchAny(r.Allow, imp) {
		return true, " (allowed: " + strings.Join(r.Allow, ", ") + ")"
	}
	if r.Sibling && ours(imp) && !matchAny(r.Exempt, imp) {
		for _, f := range r.From {
			okFrom, treeFrom := match(f, from)
			okImp, treeImp := match(f, imp)
			if okFrom && okImp && treeFrom != treeImp {
				return true, ""
			}
		}
	}
	return false, ""
}

// importChain is a shortest chain of imports from one package to another.
func importChain(pkgs map[string]*Package, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var chain []string
			for c := to; c != ""; c = prev[c] {
				chain = append([]string{c}, chain...)
			}
			return chain
		}
		if p := pkgs[cur]; p != nil {
			for _, next := range p.Imports {
				if _, ok := prev[next]; !ok {
					prev[next] = cur
					queue = append(queue, next)
				}
			}
		}
	}
	return nil
}

func uniq(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, s := range l {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

func shortAll(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = short(p)
	}
	return out
}
