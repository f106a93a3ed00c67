package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// runEnv runs the CLI with exactly env as its environment.
func runEnv(env map[string]string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Main(args, IO{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(k string) string { return env[k] }})
	return code, out.String(), errOut.String()
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (rerun with -update if the change is meant):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// commandPaths lists every command below root ("jobs", "auto-approve on", …).
func commandPaths(c *cobra.Command, prefix []string) [][]string {
	var out [][]string
	for _, sub := range c.Commands() {
		if sub.Name() == "help" || sub.Hidden {
			continue
		}
		p := append(append([]string(nil), prefix...), sub.Name())
		out = append(out, p)
		out = append(out, commandPaths(sub, p)...)
	}
	return out
}

// Every command's help: its usage line, what it does and every flag with its default.
func TestHelpGolden(t *testing.T) {
	env := map[string]string{"PICOCLAW_USER": "tester"}
	code, out, _ := runEnv(env, "--help")
	if code != ExitOK {
		t.Fatalf("--help: exit %d", code)
	}
	golden(t, "help/picoclaw.txt", out)
	paths := commandPaths(newRoot(&globals{io: IO{Getenv: func(string) string { return "" }}}), nil)
	if len(paths) < 25 {
		t.Fatalf("only %d commands found", len(paths))
	}
	for _, p := range paths {
		code, out, errOut := runEnv(env, append(append([]string(nil), p...), "--help")...)
		if code != ExitOK || errOut != "" {
			t.Errorf("%v --help: exit %d, stderr %q", p, code, errOut)
		}
		if !strings.HasPrefix(out, "usage: picoclaw "+strings.Join(p, " ")) {
			t.Errorf("%v --help does not start with its usage line:\n%s", p, out)
		}
		golden(t, "help/picoclaw_"+strings.Join(p, "_")+".txt", out)
		// `picoclaw help <command>` says the same.
		code, viaHelp, _ := runEnv(env, append([]string{"help"}, p...)...)
		if code != ExitOK || viaHelp != out {
			t.Errorf("help %v differs from %v --help (exit %d)", p, p, code)
		}
	}
}

// Exit codes scripts rely on, with the first line each command prints on standard error: in
// Japanese (the default) and in English (PICOCLAW_LOCALE=en), with the same exit code.
func TestExitCodesGolden(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	env := map[string]string{"PICOCLAW_USER": "tester", "HOME": t.TempDir()}
	withToken := map[string]string{"PICOCLAW_TOKEN": token, "HOME": t.TempDir()}
	var b strings.Builder
	for _, tc := range []struct {
		env  map[string]string
		args []string
	}{
		{env, nil},
		{env, []string{"--help"}},
		{env, []string{"help"}},
		{env, []string{"--version"}},
		{env, []string{"version", "extra"}},
		{env, []string{"frobnicate"}},
		{env, []string{"jbos"}},
		{env, []string{"--bogus"}},
		{env, []string{"jobs", "--bogus"}},
		{env, []string{"jobs", "--limit", "many"}},
		{env, []string{"jobs", "--output", "yaml"}},
		{env, []string{"jobs", "extra"}},
		{env, []string{"job"}},
		{env, []string{"job", "job_x"}},
		{env, []string{"deny"}},
		{env, []string{"approve", "a", "b"}},
		{env, []string{"auto-approve"}},
		{env, []string{"auto-approve", "sometimes"}},
		{env, []string{"auto-approve", "on", "--ttl", "soon"}},
		{env, []string{"data"}},
		{env, []string{"deadletters", "show"}},
		{env, []string{"deadletters", "show", "fax:1"}},
		{env, []string{"audit", "verify", "extra"}},
		{env, []string{"policy", "test"}},
		{env, []string{"config"}},
		{env, []string{"config", "check", "--config", missing}},
		{env, []string{"completion"}},
		{env, []string{"completion", "tcsh"}},
		{env, []string{"run", "--chat", "sometimes"}},
		{env, []string{"jobs"}},
		{withToken, []string{"jobs", "--approval-url", "http://127.0.0.1:1"}},
		{env, []string{"--config", missing, "jobs"}},
	} {
		firstLine := func(env map[string]string) (int, string) {
			code, _, errOut := runEnv(env, tc.args...)
			first, _, _ := strings.Cut(errOut, "\n")
			return code, strings.ReplaceAll(first, missing, "MISSING.yaml")
		}
		code, ja := firstLine(tc.env)
		en := map[string]string{"PICOCLAW_LOCALE": "en"}
		for k, v := range tc.env {
			en[k] = v
		}
		enCode, enFirst := firstLine(en)
		if enCode != code {
			t.Errorf("%v: exit %d in Japanese, %d in English", tc.args, code, enCode)
		}
		line := strings.ReplaceAll(strings.Join(tc.args, " "), missing, "MISSING.yaml")
		fmt.Fprintf(&b, "picoclaw %s\n  exit %d  %s\n", line, code, ja)
		if enFirst != ja {
			fmt.Fprintf(&b, "  en      %s\n", enFirst)
		}
	}
	golden(t, "exitcodes.txt", b.String())
}

// The completion scripts as shipped, and the answers the shells get back from the binary.
func TestCompletionGolden(t *testing.T) {
	env := map[string]string{}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, out, errOut := runEnv(env, "completion", sh)
		if code != ExitOK || errOut != "" || !strings.Contains(out, "__complete") {
			t.Fatalf("completion %s: exit %d %s", sh, code, errOut)
		}
		golden(t, "completion/picoclaw."+sh, out)
	}
	var b strings.Builder
	for _, args := range [][]string{
		{""},
		{"jobs", "--"},
		{"jobs", "--status", ""},
		{"jobs", "--output", ""},
		{"auto-approve", ""},
		{"deadletters", ""},
		{"deadletters", "list", "--channel", ""},
		{"config", ""},
		{"config", "print", "--service", ""},
		{"run", "--chat", ""},
		{"completion", ""},
		{"--locale", ""},
	} {
		code, out, _ := runEnv(env, append([]string{cobra.ShellCompRequestCmd}, args...)...)
		fmt.Fprintf(&b, "$ picoclaw %s<TAB>  (exit %d)\n%s\n", strings.Join(args, " "), code, out)
	}
	golden(t, "completion/answers.txt", b.String())
}
