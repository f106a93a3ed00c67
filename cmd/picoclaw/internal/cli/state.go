package cli

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

// runState is the run state file: how to reach the suite `picoclaw run` started, for the
// commands run in another terminal (jobs, job, approve, deny, auto-approve, status). It holds
// the terminal user's login token, so it is written 0600 in a 0700 directory, and it is removed
// when that suite stops.
type runState struct {
	// RESTURL is approval's REST API base (…/v1/ below it), ConsoleURL the approval console.
	RESTURL    string `json:"rest_url"`
	ConsoleURL string `json:"console_url"`
	// Token is the bearer token of User on the REST API and in the console.
	Token string `json:"token"`
	User  string `json:"user"`
	// HeartbeatURL and ExecutorURL are the internal endpoints `status` and `approve` call with
	// the terminal's (cli) key, which lives under DataDir.
	HeartbeatURL string    `json:"heartbeat_url"`
	ExecutorURL  string    `json:"executor_url"`
	DataDir      string    `json:"data_dir"`
	PID          int       `json:"pid"`
	StartedAt    time.Time `json:"started_at"`
	Version      string    `json:"version"`
}

// xdgDir is an XDG base directory: the variable when it holds an absolute path, else
// $HOME/fallback; "" when neither is known.
func xdgDir(getenv func(string) string, variable, fallback string) string {
	if d := getenv(variable); filepath.IsAbs(d) {
		return d
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, fallback)
	}
	return ""
}

// defaultStatePath is $XDG_STATE_HOME/picoclaw/run.json (~/.local/state/picoclaw/run.json),
// or PICOCLAW_STATE_FILE.
func defaultStatePath(getenv func(string) string) string {
	if p := getenv("PICOCLAW_STATE_FILE"); p != "" {
		return p
	}
	if d := xdgDir(getenv, "XDG_STATE_HOME", filepath.Join(".local", "state")); d != "" {
		return filepath.Join(d, "picoclaw", "run.json")
	}
	return ""
}

// defaultDataDir is where the embedded suite keeps its data when --data is not given: ./data
// when it already holds a suite (the default of earlier versions, and `make run`'s), else
// $XDG_DATA_HOME/picoclaw (~/.local/share/picoclaw), so `picoclaw run` works from any directory.
func defaultDataDir(getenv func(string) string) string {
	if holdsSuite("data") {
		return "data"
	}
	if d := xdgDir(getenv, "XDG_DATA_HOME", filepath.Join(".local", "share")); d != "" {
		return filepath.Join(d, "picoclaw")
	}
	return "data"
}

// holdsSuite reports whether dir is an embedded suite's data directory.
func holdsSuite(dir string) bool {
	for _, name := range []string{"audit.db", "state.db", filepath.Join("credentials", suiteKeysFile)} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// writeRunState writes st to path atomically, readable only by its owner.
func writeRunState(path string, st runState) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".run-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// removeRunState removes the state file if it still describes the process pid (a suite started
// later may have replaced it).
func removeRunState(path string, pid int) {
	st, err := readRunState(path)
	if err == nil && st.PID == pid {
		_ = os.Remove(path)
	}
}

// readRunState reads the state file; a file others can read is refused (it holds a token).
func readRunState(path string) (runState, error) {
	var st runState
	fi, err := os.Stat(path)
	if err != nil {
		return st, texts.Wrap(nil, err, txtStateBad, path, trouble(err))
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return st, texts.New(nil, txtStateOpen, path, fi.Mode().Perm())
	}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return st, texts.New(nil, txtStateOwner, path, sys.Uid)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return st, texts.Wrap(nil, err, txtStateBad, path, trouble(err))
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, texts.Wrap(nil, err, txtStateBad, path, err.Error())
	}
	return st, nil
}

// alive reports whether the process pid still runs as this user (a state file left by a killed
// suite is stale; a pid reused by another user's process is not the suite).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}

// useRunState points the approval and status commands at the suite `picoclaw run` recorded,
// unless a URL, a token or a config file names what to talk to.
func (g *globals) useRunState() error {
	if g.statePath == "" {
		g.statePath = defaultStatePath(g.io.Getenv)
	}
	if g.restURL != "" || g.token != "" || g.cfgPath != "" || g.statePath == "" {
		return nil
	}
	st, err := readRunState(g.statePath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !alive(st.PID):
		g.staleState = g.statePath
		return nil
	}
	g.state = &st
	g.restURL, g.token = st.RESTURL, st.Token
	g.cfg.Services.Heartbeat.URL, g.cfg.Services.Executor.URL = st.HeartbeatURL, st.ExecutorURL
	return nil
}

// stateCredentials are the terminal's (cli) credentials of the suite in the state file.
func (g *globals) stateCredentials() (*svcauth.Credentials, error) {
	keys, err := readSuiteKeys(filepath.Join(g.state.DataDir, "credentials"))
	if err != nil {
		return nil, err
	}
	return svcauth.Load(svcauth.CLI, authFor(keys, svcauth.CLI))
}
