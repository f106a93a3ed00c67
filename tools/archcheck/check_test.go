package archcheck

import (
	"strings"
	"testing"
)

// The fixtures are small workspaces of their own (testdata/*/go.work); go list reads them
// offline (the SDK and the drifting module are local replacements).

func TestBadFixtureFailsNamingImporterAndImport(t *testing.T) {
	problems, err := Check("testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`go.mod drift: example.com/drift is required at different versions: v1.0.0 in pkg/go.mod; v1.1.0 in services/a/go.mod`,
		`import rule "pkg never imports services, cmd, e2e or bench": pkg/x imports services/a/service`,
		`import rule "the llm core links no provider SDK and no provider package": pkg/llm links github.com/openai/openai-go/v3`,
		`import rule "heartbeat does not know the llm package (it implements llm.Tracker)": pkg/heartbeat links pkg/llm`,
		`import rule "a domain imports only pkg value packages": services/a/internal/domain imports pkg/x (allowed: pkg/patch`,
		`import rule "a service never imports another service": services/b/service imports services/a/service`,
		`import rule "provider SDKs are imported only by the model fakes' tests": pkg/llm imports github.com/openai/openai-go/v3`,
	}
	all := strings.Join(problems, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("missing problem %q in:\n%s", w, all)
		}
	}
}

func TestGoodFixturePasses(t *testing.T) {
	// The same shapes done right: the SDK only in the model fake's test, the provider package
	// linked into router-shiro, a domain on a value package, one version of each dependency.
	problems, err := Check("testdata/good")
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 0 {
		t.Fatalf("problems in the good fixture:\n%s", strings.Join(problems, "\n"))
	}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, path string
		ok            bool
		tree          string
	}{
		{"pkg/...", Prefix + "pkg", true, Prefix + "pkg"},
		{"pkg/...", Prefix + "pkg/llm/openai", true, Prefix + "pkg"},
		{"pkg/llm", Prefix + "pkg/llm/openai", false, ""},
		{"pkg/llm", Prefix + "pkg/llm", true, Prefix + "pkg/llm"},
		{"services/*/...", Prefix + "services/chat-mio/internal/app", true, Prefix + "services/chat-mio"},
		{"services/*/internal/domain/...", Prefix + "services/chat-mio/internal/app", false, ""},
		{"github.com/openai/openai-go/...", "github.com/openai/openai-go/v3/option", true, "github.com/openai/openai-go"},
		{"...", Prefix + "e2e", true, Prefix[:len(Prefix)-1]},
		{"...", "github.com/other/x", false, ""},
		{"std:html/template", "html/template", true, "html/template"},
		{"std:html/template", Prefix + "html/template", false, ""},
	}
	for _, c := range cases {
		ok, tree := match(c.pattern, c.path)
		if ok != c.ok || (ok && tree != c.tree) {
			t.Errorf("match(%q, %q) = %v, %q; want %v, %q", c.pattern, c.path, ok, tree, c.ok, c.tree)
		}
	}
}
