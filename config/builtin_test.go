package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/config"
)

func TestReadFilePrefersDiskThenTheBuiltInDefault(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	data, builtin, err := config.ReadFile("config/rules.yaml")
	if err != nil || !builtin || !strings.Contains(string(data), "rules") {
		t.Fatalf("built-in rules: %v %v %q", builtin, err, data[:min(len(data), 40)])
	}
	if _, builtin, err := config.ReadFile("./config/persona/mio.md"); err != nil || !builtin {
		t.Fatalf("built-in persona: %v %v", builtin, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config", "rules.yaml"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, builtin, err := config.ReadFile("config/rules.yaml"); err != nil || builtin || string(data) != "mine" {
		t.Fatalf("a file on disk must win: %q %v %v", data, builtin, err)
	}
	for _, p := range []string{"my/rules.yaml", filepath.Join(dir, "nope", "config", "rules.yaml"), "config/other.yaml"} {
		if _, _, err := config.ReadFile(p); err == nil {
			t.Errorf("%s: a missing non-default file did not fail", p)
		}
	}
}
