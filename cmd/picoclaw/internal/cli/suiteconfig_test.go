package cli

import (
	"os"
	"testing"
)

// suiteKeysPath is the list of every key of the suite's file that the service binaries check
// against (pkg/config embeds it).
const suiteKeysPath = "../../../../pkg/config/suite_keys.txt"

// The embedded key list must be the union of the services' Config types: a key added to a
// service is known to every other service binary (go test ./cmd/picoclaw/internal/cli -run
// TestSuiteKeysFileIsCurrent -update rewrites it).
func TestSuiteKeysFileIsCurrent(t *testing.T) {
	want := defaultSuiteConfigs().schema().String()
	if *updateGolden {
		if err := os.WriteFile(suiteKeysPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(suiteKeysPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is out of date with the services' Config types; rerun with -update", suiteKeysPath)
	}
}
