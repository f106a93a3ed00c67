package main

import (
	"bufio"
	"database/sql"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/config"

	_ "modernc.org/sqlite"
)

// session drives `picoclaw run` through its terminal: lines in, output lines out.
type session struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	seen  strings.Builder
}

func startRun(t *testing.T, bin, dataDir string, env ...string) *session {
	t.Helper()
	cmd := exec.Command(bin, "run", "--data", dataDir, "--user", "tester", "--chat", "on")
	cmd.Dir = filepath.Join("..", "..") // persona and rules files are found from the repository root
	// The run state file goes to the test's own directory, not the user's.
	cmd.Env = append(append(os.Environ(), "PICOCLAW_OLLAMA_BASE_URL=http://127.0.0.1:1", "PICOCLAW_LOCALE=ja",
		"XDG_STATE_HOME="+t.TempDir()), env...)
	return startSession(t, cmd)
}

// startSession starts cmd (a `picoclaw run` with the terminal chat on) and follows its output.
func startSession(t *testing.T, cmd *exec.Cmd) *session {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &session{t: t, cmd: cmd, in: in, lines: make(chan string, 1024)}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return s
}

// kill ends the suite with SIGKILL: no shutdown code runs.
func (s *session) kill() {
	s.t.Helper()
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// expect reads output until a line matches re and returns the match.
func (s *session) expect(re *regexp.Regexp, within time.Duration) []string {
	s.t.Helper()
	deadline := time.After(within)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("output ended before %q; output so far:\n%s", re, s.seen.String())
			}
			s.seen.WriteString(line + "\n")
			if m := re.FindStringSubmatch(line); m != nil {
				return m
			}
		case <-deadline:
			s.t.Fatalf("no %q within %v; output so far:\n%s", re, within, s.seen.String())
		}
	}
}

func (s *session) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) quit() {
	s.t.Helper()
	s.send("/quit")
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			s.t.Fatalf("picoclaw run exited with %v\n%s", err, s.seen.String())
		}
	case <-time.After(20 * time.Second):
		s.t.Fatalf("picoclaw run did not stop after /quit\n%s", s.seen.String())
	}
}

var (
	promptRE  = regexp.MustCompile(`^セッション cli:tester — /help`)
	approveRE = regexp.MustCompile(`/approve (job_\d{8}_\d{3,})`)
	resultRE  = regexp.MustCompile(`実行: 1 件, 成功: 1 件, 失敗: 0 件`)
	decidedRE = regexp.MustCompile(`job_\d{8}_\d{3,}.*(すでに|既に|承認済み|決定済み|granted|completed|完了)`)
)

// TestEmbeddedSessionApprovesAJob is the newcomer's first minute: the whole suite starts in
// one process, a request becomes a pending job, /approve runs it, and after a restart the
// job and its history are still there.
func TestEmbeddedSessionApprovesAJob(t *testing.T) {
	dir := t.TempDir()
	bin := buildPicoclaw(t, dir)
	data := filepath.Join(dir, "data")

	start := time.Now()
	s := startRun(t, bin, data)
	s.expect(promptRE, 60*time.Second)
	t.Logf("chat prompt after %v", time.Since(start).Round(time.Millisecond))

	s.send("/code2 docs/hello.md に挨拶を書いて")
	job := s.expect(approveRE, 30*time.Second)[1]
	s.send("/approve " + job)
	s.expect(resultRE, 30*time.Second)
	s.quit()

	written, err := filepath.Glob(filepath.Join(data, "workspace", "docs", "*", "*.md"))
	if err != nil || len(written) == 0 {
		t.Fatalf("the approved patch wrote nothing into the workspace: %v", err)
	}
	for _, f := range []string{"audit.db", "state.db"} {
		if _, err := os.Stat(filepath.Join(data, f)); err != nil {
			t.Fatalf("%s not kept: %v", f, err)
		}
	}

	// A restart keeps the audit store: the job is already decided.
	s2 := startRun(t, bin, data)
	s2.expect(promptRE, 60*time.Second)
	s2.send("/approve " + job)
	s2.expect(regexp.MustCompile(regexp.QuoteMeta(job)), 30*time.Second)
	s2.quit()
	if !decidedRE.MatchString(s2.seen.String()) {
		t.Fatalf("after a restart, approving %s again does not say it was decided:\n%s", job, s2.seen.String())
	}
	auditVerifyEmbedded(t, bin, data, job)
}

// buildPicoclaw builds this command into dir as it is shipped (SQLite only).
func buildPicoclaw(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "picoclaw")
	if out, err := exec.Command("go", "build", "-tags", config.SQLiteOnlyTag, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// auditVerifyEmbedded: the suite generated its audit key on first start (owner-only) and kept
// it across the restart; `picoclaw audit verify --data` checks the SQLite log with it, and
// reports a job row edited behind the suite's back with exit code 7.
func auditVerifyEmbedded(t *testing.T, bin, data, job string) {
	t.Helper()
	st, err := os.Stat(filepath.Join(data, "credentials", "audit.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("generated audit key: %v, mode %v", err, st.Mode().Perm())
	}
	verify := func() (int, string) {
		cmd := exec.Command(bin, "--locale", "en", "audit", "verify", "--data", data)
		cmd.Env = append(os.Environ(), "PICOCLAW_AUDIT_KEY=", "PICOCLAW_POSTGRES_DSN=")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("audit verify: %v", err)
		}
		return cmd.ProcessState.ExitCode(), string(out)
	}
	if code, out := verify(); code != 0 || !strings.Contains(out, "0 findings") {
		t.Fatalf("audit verify of an untouched embedded log: exit %d\n%s", code, out)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "audit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE approval_jobs SET approver = 'Umallory' WHERE job_id = ?`, job); err != nil {
		t.Fatal(err)
	}
	if code, out := verify(); code != 7 || !strings.Contains(out, job) || !strings.Contains(out, "read_model_mismatch") {
		t.Fatalf("audit verify after editing %s: exit %d, want 7\n%s", job, code, out)
	}
}
