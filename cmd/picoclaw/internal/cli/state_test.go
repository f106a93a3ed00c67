package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jobsJSON runs `jobs --output json` and parses it.
func jobsJSON(t *testing.T, env map[string]string, args ...string) (int, []jobJSON, string) {
	t.Helper()
	code, out, errOut := runEnv(env, append([]string{"jobs", "--output", "json"}, args...)...)
	if code != ExitOK {
		return code, nil, errOut
	}
	var list struct {
		Jobs []jobJSON `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("jobs --output json is not JSON: %v\n%s", err, out)
	}
	return code, list.Jobs, errOut
}

// The approval commands find the running suite, its REST URL and the login token in the run
// state file when nothing else names a suite; a file left by a stopped suite, or one that
// others can read, is not used.
func TestApprovalCommandsUseTheRunState(t *testing.T) {
	internal, public := startApproval(t)
	requestApproval(t, internal, "job_20261122_001", "docs/a.md")
	home := t.TempDir()
	statePath := filepath.Join(home, ".local", "state", "picoclaw", "run.json")
	write := func(st runState, mode os.FileMode) {
		t.Helper()
		if err := writeRunState(statePath, st); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(statePath, mode); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": home}
	live := runState{RESTURL: public + "/v1/", ConsoleURL: public + "/ui/", Token: token, PID: os.Getpid()}
	write(live, 0o600)

	// A job id completes from the running suite's pending jobs.
	if code, out, _ := runEnv(env, "__complete", "approve", ""); code != ExitOK || !strings.Contains(out, "job_20261122_001\tpending") {
		t.Fatalf("approve <TAB>: exit %d\n%s", code, out)
	}
	code, jobs, errOut := jobsJSON(t, env)
	if code != ExitOK || len(jobs) != 1 || jobs[0].JobID != "job_20261122_001" || jobs[0].Status != "pending" {
		t.Fatalf("jobs through the state file: exit %d %+v %s", code, jobs, errOut)
	}
	if code, out, errOut := runEnv(env, "deny", "job_20261122_001", "--reason", "state file"); code != ExitOK || !strings.Contains(out, "却下済み") {
		t.Fatalf("deny through the state file: exit %d %s %s", code, out, errOut)
	}

	// --state and PICOCLAW_STATE_FILE name another file.
	other := filepath.Join(t.TempDir(), "other.json")
	if err := os.Rename(statePath, other); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := jobsJSON(t, env, "--state", other); code != ExitOK {
		t.Fatalf("--state: exit %d %s", code, errOut)
	}
	if code, _, errOut := jobsJSON(t, map[string]string{"HOME": home, "PICOCLAW_STATE_FILE": other}); code != ExitOK {
		t.Fatalf("PICOCLAW_STATE_FILE: exit %d %s", code, errOut)
	}

	// A token or URL given by the user wins over the state file.
	write(live, 0o600)
	if code, _, errOut := runEnv(map[string]string{"HOME": home, "PICOCLAW_TOKEN": token,
		"PICOCLAW_SERVICES_APPROVAL_PUBLIC_URL": "http://127.0.0.1:1"}, "jobs"); code != ExitUnavailable {
		t.Fatalf("with PICOCLAW_TOKEN the config's URL is used, not the state file's: exit %d %s", code, errOut)
	}
	if code, _, _ := runEnv(env, "jobs", "--approval-url", "http://127.0.0.1:1"); code != ExitUnauthorized {
		t.Fatalf("--approval-url must win over the state file (and its token): exit %d", code)
	}

	// A state file others can read is refused; one left by a stopped suite is ignored.
	write(live, 0o644)
	if code, _, errOut := runEnv(env, "jobs"); code == ExitOK || !strings.Contains(errOut, "ほかのユーザーが読めます（モード -rw-r--r--）") {
		t.Fatalf("a world-readable state file: exit %d %s", code, errOut)
	}
	stale := live
	stale.PID = 1 << 30 // no such process
	write(stale, 0o600)
	if code, _, errOut := runEnv(env, "jobs"); code != ExitUnauthorized || !strings.Contains(errOut, "もう動いていません") {
		t.Fatalf("a stale state file: exit %d %s", code, errOut)
	}
}

func TestRemoveRunStateKeepsAnotherSuitesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	if err := writeRunState(path, runState{PID: 42}); err != nil {
		t.Fatal(err)
	}
	removeRunState(path, 41)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the file of another suite was removed: %v", err)
	}
	removeRunState(path, 42)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the suite's own file was kept: %v", err)
	}
}

func TestXDGDefaults(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if got := defaultStatePath(env(map[string]string{"HOME": "/home/u"})); got != "/home/u/.local/state/picoclaw/run.json" {
		t.Errorf("state path: %s", got)
	}
	if got := defaultStatePath(env(map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/s"})); got != "/s/picoclaw/run.json" {
		t.Errorf("state path with XDG_STATE_HOME: %s", got)
	}
	if got := defaultStatePath(env(map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "relative"})); got != "/home/u/.local/state/picoclaw/run.json" {
		t.Errorf("a relative XDG_STATE_HOME is ignored (XDG spec): %s", got)
	}
	t.Chdir(t.TempDir())
	if got := defaultDataDir(env(map[string]string{"HOME": "/home/u"})); got != "/home/u/.local/share/picoclaw" {
		t.Errorf("data dir: %s", got)
	}
	if got := defaultDataDir(env(map[string]string{"XDG_DATA_HOME": "/d"})); got != "/d/picoclaw" {
		t.Errorf("data dir with XDG_DATA_HOME: %s", got)
	}
	// An existing ./data of an earlier version (or `make run`) stays the default.
	if err := os.MkdirAll(filepath.Join("data", "credentials"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("data", "audit.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := defaultDataDir(env(map[string]string{"HOME": "/home/u"})); got != "data" {
		t.Errorf("data dir with ./data holding a suite: %s", got)
	}
}
