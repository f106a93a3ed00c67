package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
)

const (
	crashLineSecret = "crash-test-line-secret-0123456789abcdef"
	crashLineToken  = "crash-test-line-token-0123456789abcdefghij"
)

var (
	autoOnRE    = regexp.MustCompile(`Auto-Approve: ON|Auto-Approve を有効にしました`)
	autoOffRE   = regexp.MustCompile(`Auto-Approve: OFF|Auto-Approve を無効にしました`)
	autoStateRE = regexp.MustCompile(`Auto-Approve: (ON|OFF)`)
	localOnRE   = regexp.MustCompile(`ローカル限定モードにしました`)
	statusRE    = regexp.MustCompile(`セッション cli:tester: ローカル限定 (\S+) /`)
	webhookRE   = regexp.MustCompile(`LINE webhook: (http://\S+)`)
	jobNumRE    = regexp.MustCompile(`/approve job_\d{8}_(\d{3,})`)
)

// SIGKILL of the embedded suite right after each kind of write: after the restart the write
// is there and nothing is duplicated — Auto-Approve switched off stays off, a session flag
// stays set, a JobID is not handed out again, and a LINE message acknowledged just before the
// kill is answered exactly once.
func TestEmbeddedSuiteKeepsEveryAcknowledgedWriteAcrossSIGKILL(t *testing.T) {
	dir := t.TempDir()
	bin := buildPicoclaw(t, dir)
	data := filepath.Join(dir, "data")
	line := fakeline.NewServer(crashLineToken)
	t.Cleanup(line.Close)
	env := []string{"LINE_CHANNEL_SECRET=" + crashLineSecret, "LINE_CHANNEL_ACCESS_TOKEN=" + crashLineToken,
		"PICOCLAW_LINE_API_BASE_URL=" + line.URL, "PICOCLAW_LINE_ALLOWED_USERS=Ucrash"}
	run := func() (*session, string) {
		s := startRun(t, bin, data, env...)
		hook := s.expect(webhookRE, 60*time.Second)[1]
		s.expect(promptRE, 60*time.Second)
		return s, hook
	}

	// Auto-Approve on, then off; killed right after "off" was confirmed.
	s, _ := run()
	s.send("/auto-approve on paths=docs/ ttl=30m")
	s.expect(autoOnRE, 30*time.Second)
	s.send("/auto-approve off")
	s.expect(autoOffRE, 30*time.Second)
	s.kill()

	s, _ = run()
	s.send("/auto-approve status")
	if got := s.expect(autoStateRE, 30*time.Second)[1]; got != "OFF" {
		t.Fatalf("Auto-Approve switched off came back %s after SIGKILL", got)
	}
	// A session flag; killed right after it was confirmed.
	s.send("/local")
	s.expect(localOnRE, 30*time.Second)
	s.kill()

	s, _ = run()
	s.send("/status")
	if got := s.expect(statusRE, 30*time.Second)[1]; got != "オン" {
		t.Fatalf("local-only after SIGKILL = %q, want オン", got)
	}
	s.send("/cloud")
	s.expect(regexp.MustCompile(`ローカル限定モードを解除しました`), 30*time.Second)
	// A JobID; killed right after it was handed out.
	s.send("/code2 docs/a.md を書いて")
	first, _ := strconv.Atoi(s.expect(jobNumRE, 30*time.Second)[1])
	s.kill()

	s, hook := run()
	s.send("/code2 docs/b.md を書いて")
	if next, _ := strconv.Atoi(s.expect(jobNumRE, 30*time.Second)[1]); next <= first {
		t.Fatalf("job number %d handed out again after SIGKILL (before: %d)", next, first)
	}
	// A LINE message: killed right after the webhook was acknowledged, before it could be
	// answered for sure.
	line.IssueReplyToken("rt-crash")
	body := fakeline.Body(fakeline.TextEvent("EvCrash01", "Ucrash", "", "rt-crash", "こんにちは", time.Now().UnixMilli(), false))
	res, err := fakeline.Post(http.DefaultClient, hook, crashLineSecret, body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("webhook: %v %v", res, err)
	}
	res.Body.Close()
	s.kill()

	s, _ = run()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && len(answersTo(line, "Ucrash")) == 0 {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // a second answer, if one were coming, has had its chance
	if got := answersTo(line, "Ucrash"); len(got) != 1 {
		t.Fatalf("the acknowledged LINE message was answered %d times after SIGKILL: %v", len(got), got)
	}
	s.quit()
}

// answersTo lists the messages (replies or pushes) the fake LINE API accepted for user: one
// entry per send.
func answersTo(line *fakeline.Server, user string) []string {
	var out []string
	for _, m := range line.Sent() {
		if m.To == user || m.ReplyToken != "" {
			out = append(out, fmt.Sprint(m.Kind, ":", strings.Join(textsOf(m), "|")))
		}
	}
	return out
}

func textsOf(m fakeline.Sent) []string {
	var out []string
	for _, x := range m.Messages {
		out = append(out, x.Text)
	}
	return out
}

// Without a terminal the suite runs as a service, from any directory: it does not stop when stdin ends, a second
// suite on the same data directory is refused, and SIGTERM stops it cleanly.
func TestEmbeddedSuiteRunsAsAServiceUntilSIGTERM(t *testing.T) {
	dir := t.TempDir()
	bin := buildPicoclaw(t, dir)
	data := filepath.Join(dir, "data")
	cmd := exec.Command(bin, "run", "--data", data, "--user", "tester") // stdin is not a terminal
	cmd.Dir = dir                                                       // not the repository: the persona and the rules are built in
	cmd.Env = append(os.Environ(), "PICOCLAW_OLLAMA_BASE_URL=http://127.0.0.1:1", "XDG_STATE_HOME="+t.TempDir())
	var out testinfra.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "Running as a service") && !strings.Contains(out.String(), "サービスとして動いています") {
		if time.Now().After(deadline) {
			t.Fatalf("no service banner:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if cmd.ProcessState != nil {
		t.Fatalf("the service stopped on its own:\n%s", out.String())
	}
	second, err := exec.Command(bin, "run", "--data", data, "--chat", "off").CombinedOutput()
	if err == nil || !strings.Contains(string(second), "ほかの picoclaw（pid ") {
		t.Fatalf("a second suite on the same data directory: %v\n%s", err, second)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("SIGTERM: exit %v\n%s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the service did not stop after SIGTERM:\n%s", out.String())
	}
}
