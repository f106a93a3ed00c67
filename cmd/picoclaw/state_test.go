package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
)

// cleanEnv is the environment without anything that names a suite: no PICOCLAW_* variables,
// no XDG directories, and home set to home.
func cleanEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PICOCLAW_") || strings.HasPrefix(k, "XDG_") || k == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home)
}

// The newcomer's path: `go install` the CLI, start `picoclaw run` in an empty directory with
// nothing configured, and drive it from another terminal with `picoclaw jobs`, `deny`, `approve`
// and `status`, which find the suite, its URLs and the login token through the run state file only.
func TestInstalledCLIReachesTheRunningSuiteThroughTheStateFile(t *testing.T) {
	dir := t.TempDir()
	gobin, home, empty := filepath.Join(dir, "bin"), filepath.Join(dir, "home"), filepath.Join(dir, "empty")
	for _, d := range []string{gobin, home, empty} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	install := exec.Command("go", "install", "-tags", config.SQLiteOnlyTag, ".")
	install.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	bin := filepath.Join(gobin, "picoclaw")

	run := exec.Command(bin, "run", "--user", "tester", "--chat", "on")
	run.Dir = empty
	run.Env = append(cleanEnv(home), "PICOCLAW_OLLAMA_BASE_URL=http://127.0.0.1:1", "PICOCLAW_LOCALE=ja")
	s := startSession(t, run)
	banner := s.expect(consoleRE, 60*time.Second)
	s.expect(promptRE, 60*time.Second)

	statePath := filepath.Join(home, ".local", "state", "picoclaw", "run.json")
	fi, err := os.Stat(statePath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file %s: %v (mode %v)", statePath, err, fi.Mode().Perm())
	}
	var st struct {
		RESTURL    string `json:"rest_url"`
		ConsoleURL string `json:"console_url"`
		Token      string `json:"token"`
		DataDir    string `json:"data_dir"`
	}
	data, err := os.ReadFile(statePath)
	if err != nil || json.Unmarshal(data, &st) != nil {
		t.Fatalf("state file: %v %s", err, data)
	}
	if st.ConsoleURL != banner[1] || st.RESTURL != banner[2] || len(st.Token) < 32 ||
		st.DataDir != filepath.Join(home, ".local", "share", "picoclaw") {
		t.Fatalf("state %+v does not match the banner %q", st, banner)
	}
	if !strings.Contains(s.seen.String(), st.Token) {
		t.Fatalf("the banner does not show the login token:\n%s", s.seen.String())
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Fatalf("picoclaw run wrote into the working directory: %v", entries)
	}

	s.send("/code2 docs/hello.md に挨拶を書いて")
	job := s.expect(approveRE, 30*time.Second)[1]

	cli := func(args ...string) (int, string) {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Dir, c.Env = empty, cleanEnv(home)
		out, err := c.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("%v: %v", args, err)
		}
		return c.ProcessState.ExitCode(), string(out)
	}
	code, out := cli("jobs", "--status", "pending", "--output", "json")
	var list struct {
		Jobs []struct {
			JobID  string `json:"job_id"`
			Status string `json:"status"`
		} `json:"jobs"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Jobs) != 1 || list.Jobs[0].JobID != job || list.Jobs[0].Status != "pending" {
		t.Fatalf("jobs through the state file: exit %d\n%s", code, out)
	}
	if code, out := cli("deny", job, "--reason", "not today"); code != 0 || !strings.Contains(out, job+": 却下済み") {
		t.Fatalf("deny through the state file: exit %d\n%s", code, out)
	}
	s.send("/code2 docs/bye.md にお別れを書いて")
	second := job
	for second == job { // the first job's request may still be on the screen
		second = s.expect(approveRE, 30*time.Second)[1]
	}
	if code, out := cli("approve", second); code != 0 || !strings.Contains(out, second+": 承認済み") {
		t.Fatalf("approve through the state file: exit %d\n%s", code, out)
	}
	code, out = cli("status", "-o", "json")
	var report struct {
		Agents []json.RawMessage `json:"agents"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &report) != nil || len(report.Agents) == 0 {
		t.Fatalf("status through the state file (the cli key from the data directory): exit %d\n%s", code, out)
	}

	s.quit()
	if _, err := os.Stat(statePath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the state file outlived the suite: %v", err)
	}
	if code, out := cli("jobs"); code != 5 || !strings.Contains(out, "PICOCLAW_TOKEN が設定されていません") {
		t.Fatalf("jobs with no suite running: exit %d\n%s", code, out)
	}
}

var consoleRE = regexp.MustCompile(`(?:承認コンソール|approval console): (\S+)\s+REST: (\S+)`)
