package testinfra

import (
	"os"
	"path/filepath"
)

// WriteFiles writes files (slash-separated name → content) below dir, making the directories
// on the way: a fixture repository in a test's temporary directory.
func WriteFiles(t TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatalf("fixture %s: %v", name, err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatalf("fixture %s: %v", name, err)
		}
	}
}
