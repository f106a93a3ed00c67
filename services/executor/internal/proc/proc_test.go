package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/executor/internal/testpeer"
)

func bash(dir, line string, timeout time.Duration, limit int) Spec {
	return Spec{Argv: []string{"bash", "-c", line}, Dir: dir, Env: Env([]string{"PATH"}, os.LookupEnv), Timeout: timeout, Limit: limit}
}

func TestOutputIsCappedWhileStreaming(t *testing.T) {
	out, err := Run(context.Background(), bash(t.TempDir(), "head -c 104857600 /dev/zero | tr '\\0' x; echo done >&2", 10*time.Second, 64<<10))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Truncated || out.Total != 104857600+5 {
		t.Fatalf("truncated=%v total=%d", out.Truncated, out.Total)
	}
	if !strings.HasPrefix(out.Text, strings.Repeat("x", 64<<10)) || !strings.Contains(out.Text, "output cut: 65536 of 104857605 bytes kept") {
		t.Fatalf("text tail = %q", out.Text[len(out.Text)-80:])
	}
}

func TestTimeoutKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	start := time.Now()
	out, err := Run(context.Background(), bash(dir, "sleep 30 & echo $! > child.pid; echo started; sleep 30", 300*time.Millisecond, 1024))
	if !errors.Is(err, ErrTimeout) || !out.TimedOut {
		t.Fatalf("err = %v, out = %+v", err, out)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}
	if !strings.Contains(out.Text, "started") {
		t.Fatalf("output before the kill is kept: %q", out.Text)
	}
	assertGone(t, pidFile)
}

func TestBackgroundChildDoesNotOutliveCommand(t *testing.T) {
	dir := t.TempDir()
	out, err := Run(context.Background(), bash(dir, "(sleep 30; echo late) & echo $! > child.pid; echo quick", time.Second, 1024))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.Text) != "quick" {
		t.Fatalf("out = %q", out.Text)
	}
	assertGone(t, filepath.Join(dir, "child.pid"))
}

func TestExitStatus(t *testing.T) {
	out, err := Run(context.Background(), bash(t.TempDir(), "echo oops >&2; exit 3", time.Second, 1024))
	if err == nil || out.ExitCode != 3 || !strings.Contains(out.Text, "oops") {
		t.Fatalf("err=%v out=%+v", err, out)
	}
}

func TestEnvIsScrubbed(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("PICOCLAW_TEST_MARKER", "leak")
	env := Env([]string{"PATH", "HOME", "LANG", "PATH"}, func(k string) (string, bool) {
		return map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/x"}[k], k != "LANG"
	})
	if strings.Join(env, ";") != "PATH=/usr/bin:/bin;HOME=/home/x" {
		t.Fatalf("env = %q", env)
	}
}

// assertGone waits briefly for the pid in file to disappear (kill -0 fails).
func assertGone(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The group is killed before Run returns; allow the kernel a moment to deliver it.
	deadline := time.Now().Add(time.Second)
	for testpeer.Alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d outlived its command", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func BenchmarkRunTrue(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		if _, err := Run(context.Background(), bash(dir, "true", time.Second, 1024)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCapped100MB measures streaming 100 MB through the cap (b.SetBytes gives MB/s).
func BenchmarkCapped100MB(b *testing.B) {
	dir := b.TempDir()
	b.SetBytes(100 << 20)
	for b.Loop() {
		out, err := Run(context.Background(), bash(dir, "head -c 104857600 /dev/zero", 30*time.Second, 64<<10))
		if err != nil || !out.Truncated {
			b.Fatal(err)
		}
	}
}
