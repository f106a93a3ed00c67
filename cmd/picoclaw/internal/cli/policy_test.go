package cli

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files")

// policyHash hides the default policy's hash in golden files (it changes with the file).
var policyHash = regexp.MustCompile(`sha256:[0-9a-f]{64}`)

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	got = policyHash.ReplaceAllString(got, "sha256:(policy hash)")
	file := filepath.Join("testdata", "policy", name+".golden")
	if *updateGolden {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n%s", file, got)
	}
}

// TestPolicyTestGolden runs `picoclaw policy test` offline and compares with golden files.
func TestPolicyTestGolden(t *testing.T) {
	user := filepath.Join("testdata", "policy", "user-policy.yaml")
	tests := []struct {
		name, locale string
		args         []string
	}{
		{"docs-default", "en", []string{"testdata/policy/docs.patch", "--route", "CODE1", "--task", "docs", "--as", "Ualice"}},
		{"docs-user-policy", "en", []string{"testdata/policy/docs.patch", "--task", "docs", "--policy", user}},
		{"delete-push", "en", []string{"testdata/policy/delete-push.patch"}},
		// In Japanese, the reason and the requirements are said in Japanese too.
		{"delete-push-ja", "ja", []string{"testdata/policy/delete-push.patch"}},
		{"mkfs-json", "en", []string{"testdata/policy/mkfs.patch", "--json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, "http://127.0.0.1:1", "", append([]string{"--locale", tc.locale, "policy", "test"}, tc.args...)...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			checkGolden(t, tc.name, out)
		})
	}
}

func TestPolicyTestUsage(t *testing.T) {
	for _, args := range [][]string{
		{"policy"},
		{"policy", "test"},
		{"policy", "test", "testdata/policy/missing.patch"},
		{"policy", "test", "testdata/policy/docs.patch", "--remote", "--policy", "x.yaml"},
		{"policy", "test", "testdata/policy/docs.patch", "--policy", "testdata/policy/docs.patch"},
	} {
		if code, _, _ := run(t, "http://127.0.0.1:1", "", args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
}

// TestPolicyTestRemote asks the real approval service: the same answer as offline (it runs the
// default policy and no grant is on), and no job is created.
func TestPolicyTestRemote(t *testing.T) {
	_, url := startApproval(t)
	for _, patch := range []string{"docs.patch", "delete-push.patch", "mkfs.patch"} {
		file := filepath.Join("testdata", "policy", patch)
		code, remote, errOut := run(t, url, token, "policy", "test", file, "--task", "docs", "--remote", "--json")
		if code != ExitOK {
			t.Fatalf("%s remote: %d %s", patch, code, errOut)
		}
		_, offline, _ := run(t, url, token, "policy", "test", file, "--task", "docs", "--json")
		var a, b map[string]any
		if err := json.Unmarshal([]byte(remote), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(offline), &b); err != nil {
			t.Fatal(err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("%s: remote and offline answers differ:\nremote  %s\noffline %s", patch, ja, jb)
		}
	}
	code, out, _ := run(t, url, token, "jobs")
	if code != ExitOK || strings.Contains(out, "job_") {
		t.Errorf("policy test created jobs: %s", out)
	}
	if code, _, _ := run(t, url, "", "policy", "test", "testdata/policy/docs.patch", "--remote"); code != ExitUnauthorized {
		t.Errorf("remote without a token: exit %d", code)
	}
}
