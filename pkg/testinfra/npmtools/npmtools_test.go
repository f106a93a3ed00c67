package npmtools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

type fakeTB struct{ fatal, skip string }

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Name() string                   { return "TestFake" }
func (f *fakeTB) Cleanup(func())                 {}
func (f *fakeTB) Logf(string, ...any)            {}
func (f *fakeTB) Fatalf(format string, a ...any) { f.fatal = fmt.Sprintf(format, a...) }
func (f *fakeTB) Skipf(format string, a ...any)  { f.skip = fmt.Sprintf(format, a...) }

// A package that is missing, or installed at another version than the pin, is a skip that
// says what to run, and a failure when integration tests are required.
func TestMissingOrStalePackage(t *testing.T) {
	stale := t.TempDir()
	dir := filepath.Join(stale, "node_modules", ChromeBridgeShared)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"chrome-mcp-shared","version":"0.0.1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{t.TempDir(), "is not installed"},
		{stale, "is 0.0.1, tools/npm/package.json pins"},
	} {
		t.Setenv(EnvDir, tc.dir)
		t.Setenv(testinfra.EnvRequireIntegration, "1")
		required := &fakeTB{}
		Require(required, ChromeBridgeShared)
		if required.skip != "" || !strings.Contains(required.fatal, tc.want) || !strings.Contains(required.fatal, "make npm-tools") {
			t.Errorf("required: fatal=%q skip=%q", required.fatal, required.skip)
		}
		t.Setenv(testinfra.EnvRequireIntegration, "")
		optional := &fakeTB{}
		Require(optional, ChromeBridgeShared)
		if optional.fatal != "" || !strings.Contains(optional.skip, tc.want) || !strings.Contains(optional.skip, "make npm-tools") {
			t.Errorf("optional: fatal=%q skip=%q", optional.fatal, optional.skip)
		}
	}
	unpinned := &fakeTB{}
	Require(unpinned, "left-pad")
	if !strings.Contains(unpinned.skip+unpinned.fatal, "not pinned") {
		t.Errorf("unpinned: fatal=%q skip=%q", unpinned.fatal, unpinned.skip)
	}
}
