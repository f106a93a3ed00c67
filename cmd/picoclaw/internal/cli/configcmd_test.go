package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	suiteconfig "github.com/picoclaw-suite/picoclaw/config"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "picoclaw.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigCheckAcceptsTheExample(t *testing.T) {
	env := map[string]string{"HOME": t.TempDir()}
	if code, out, errOut := runEnv(env, "--locale", "en", "config", "check", "--config", "../../../../config/picoclaw.example.yaml"); code != ExitOK || !strings.Contains(out, ": OK") {
		t.Fatalf("config check of the example: exit %d\n%s%s", code, out, errOut)
	}
}

// Every problem is listed at once, each with its key's path; the exit code is 1.
func TestConfigCheckListsEveryProblem(t *testing.T) {
	path := writeConfig(t, `
approval:
  pending_ttl: soon
  auto_approve:
    default_scop: {tasks: [docs]}
    max_ttl: [1, 2]
executor:
  sandbox: {limits: {cpu_secnds: 10}}
redis:
  password: hunter2
timezone: Mars/Olympus
`)
	env := map[string]string{"HOME": t.TempDir(), "PICOCLAW_HTTP_MAX_CONNS": "lots"}
	code, _, errOut := runEnv(env, "config", "check", "--config", path)
	if code != ExitError {
		t.Fatalf("exit %d, want 1\n%s", code, errOut)
	}
	for _, want := range []string{
		`approval.pending_ttl: want a duration, got "soon" (line 3)`,
		"approval.auto_approve.default_scop: unknown key; did you mean default_scope? (line 5)",
		"approval.auto_approve.max_ttl: want a duration, got [1 2] (line 6)",
		"executor.sandbox.limits.cpu_secnds: unknown key; did you mean cpu_seconds? (line 8)",
		"redis.password: secrets are not read from the file; set REDIS_PASSWORD (line 10)",
		"environment PICOCLAW_HTTP_MAX_CONNS (http.max_conns)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("config check does not report %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "hunter2") {
		t.Errorf("the report repeats a secret:\n%s", errOut)
	}
	// Once the file decodes, the services' own checks run: every invalid value is named.
	path = writeConfig(t, "timezone: Mars/Olympus\nlocale: fr\napproval: {pending_ttl: -1s}\n")
	code, _, errOut = runEnv(map[string]string{"HOME": t.TempDir()}, "config", "check", "--config", path)
	if code != ExitError || !strings.Contains(errOut, "timezone:") || !strings.Contains(errOut, "locale:") || !strings.Contains(errOut, "approval.pending_ttl:") {
		t.Fatalf("validation problems: exit %d\n%s", code, errOut)
	}
	if strings.Count(errOut, "locale:") != 1 {
		t.Errorf("a problem of a common key is reported once, not once per service:\n%s", errOut)
	}
}

// config print shows the values in force (defaults, file, environment) as YAML that decodes
// again, with secrets masked.
func TestConfigPrintMasksSecrets(t *testing.T) {
	path := writeConfig(t, "approval: {pending_ttl: 10m}\nexecutor: {workspace: /srv/work}\n")
	env := map[string]string{"HOME": t.TempDir(), "REDIS_PASSWORD": "redis-secret-value-1234",
		"PICOCLAW_APPROVAL_TOKENS": "ops:approval-token-value-0123456789abcdef", "PICOCLAW_OLLAMA_BASE_URL": "http://admin:ollama-pass@127.0.0.1:11434",
		"PICOCLAW_LOCALE": "en"}
	code, out, errOut := runEnv(env, "config", "print", "--config", path)
	if code != ExitOK {
		t.Fatalf("config print: exit %d %s", code, errOut)
	}
	for _, leak := range []string{"redis-secret-value", "approval-token-value", "ollama-pass"} {
		if strings.Contains(out, leak) {
			t.Errorf("config print shows a secret (%s):\n%s", leak, out)
		}
	}
	for _, want := range []string{"pending_ttl: 10m0s", "workspace: /srv/work", "locale: en", "password=*** (REDIS_PASSWORD)",
		"tokens=*** (PICOCLAW_APPROVAL_TOKENS)", "report_to_chat: false", "max_ttl: 24h0m0s"} {
		if !strings.Contains(out, want) {
			t.Errorf("config print lacks %q:\n%s", want, out)
		}
	}
	printed := writeConfig(t, out)
	if code, _, errOut := runEnv(map[string]string{"HOME": t.TempDir()}, "config", "check", "--config", printed); code != ExitOK {
		t.Errorf("the printed configuration does not pass config check: %s", errOut)
	}

	code, out, _ = runEnv(env, "config", "print", "--config", path, "--service", "executor")
	if code != ExitOK || !strings.Contains(out, "workspace: /srv/work") || strings.Contains(out, "pending_ttl") {
		t.Errorf("config print --service executor: exit %d\n%s", code, out)
	}
	if code, _, _ := runEnv(env, "config", "print", "--service", "nobody"); code != ExitUsage {
		t.Errorf("an unknown service: exit %d", code)
	}
}

// `picoclaw config example` prints the example file built into the binary, which `config check`
// accepts as it is: it works after `go install`, from any directory.
func TestConfigExamplePrintsTheBuiltInExample(t *testing.T) {
	code, out, errOut := runEnv(map[string]string{"HOME": t.TempDir()}, "config", "example")
	if code != ExitOK {
		t.Fatalf("config example: exit %d\n%s", code, errOut)
	}
	if out != string(suiteconfig.Example()) || !strings.Contains(out, "approval:") {
		t.Fatalf("config example printed something else than the built-in example (%d bytes)", len(out))
	}
	path := filepath.Join(t.TempDir(), "picoclaw.yaml")
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runEnv(map[string]string{"HOME": t.TempDir()}, "--locale", "en", "config", "check", "--config", path); code != ExitOK || !strings.Contains(out, ": OK") {
		t.Fatalf("config check of the printed example: exit %d\n%s%s", code, out, errOut)
	}
}
