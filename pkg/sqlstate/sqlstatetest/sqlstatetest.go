// Package sqlstatetest helps the tests of stores on the embedded state engine: a database per
// test that can be reopened as a restarted process would, and crash tests that kill a real
// process with SIGKILL right after a write returned.
package sqlstatetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
)

// Handle is one test's state database.
type Handle struct {
	t    testing.TB
	path string
	db   *sqlstate.DB
}

// New opens a fresh database in the test's temporary directory; it is closed at cleanup.
func New(t testing.TB) *Handle {
	t.Helper()
	return OpenAt(t, filepath.Join(t.TempDir(), "state.db"))
}

// OpenAt opens the database at path; it is closed at cleanup.
func OpenAt(t testing.TB, path string) *Handle {
	t.Helper()
	h := &Handle{t: t, path: path}
	h.db = h.open()
	t.Cleanup(func() { _ = h.db.Close() })
	return h
}

func (h *Handle) open() *sqlstate.DB {
	h.t.Helper()
	db, err := sqlstate.Open(context.Background(), h.path, sqlstate.Options{})
	if err != nil {
		h.t.Fatal(err)
	}
	return db
}

// DB is the open database.
func (h *Handle) DB() *sqlstate.DB { return h.db }

// Path is the database file.
func (h *Handle) Path() string { return h.path }

// Reopen closes the database file and opens it again, as a restarted process would; the old
// handle must not be used any more.
func (h *Handle) Reopen() *sqlstate.DB {
	h.t.Helper()
	if err := h.db.Close(); err != nil {
		h.t.Fatal(err)
	}
	h.db = h.open()
	return h.db
}

// Closed returns what build made on a fresh database after closing that database: a store
// whose engine cannot be reached.
func Closed[T any](t testing.TB, build func(db *sqlstate.DB) T) T {
	t.Helper()
	db, err := sqlstate.Open(context.Background(), filepath.Join(t.TempDir(), "closed.db"), sqlstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := build(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return v
}

const (
	envCrash = "PICOCLAW_SQLSTATETEST_CRASH"
	envDir   = "PICOCLAW_SQLSTATETEST_DIR"
)

// Crash runs the calling test again in a child process (the test binary, filtered to this
// test) where child(t, dir, out) runs and the process is killed with SIGKILL the moment child
// returns: no deferred function, no Close, no checkpoint runs after the last write. It
// returns the lines child wrote to out. In the child process Crash does not return, so the
// code after it runs only in the parent; code before it runs in both and must leave dir alone
// (the child gets the parent's dir as its argument). One test calls Crash at most once; use a
// subtest per crash for several.
func Crash(t *testing.T, dir string, child func(t *testing.T, dir string, out io.Writer)) []string {
	t.Helper()
	if name, ok := os.LookupEnv(envCrash); ok {
		if name != t.Name() {
			t.Fatalf("crash child of %s reached Crash in %s", name, t.Name())
		}
		child(t, os.Getenv(envDir), os.Stdout)
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			_ = p.Kill()
		}
		for {
			time.Sleep(time.Hour)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run="+runPattern(t.Name()), "-test.count=1")
	cmd.Env = append(os.Environ(), envCrash+"="+t.Name(), envDir+"="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if !killed(err) {
		t.Fatalf("the crash child did not die of SIGKILL (%v)\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var lines []string
	for l := range strings.Lines(stdout.String()) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

func killed(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// runPattern selects exactly the test named name (subtests included) with -test.run.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}
