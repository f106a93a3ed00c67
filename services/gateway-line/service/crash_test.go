package service_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink/chatlinktest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/linetest"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

// TestKilledAfterAckAnsweredExactlyOnce starts the real gateway binary, lets it acknowledge a
// webhook (200) and start working, kills it with SIGKILL before any reply went out, and starts
// the binary again (under another consumer name, as after moving hosts): every event is
// answered exactly once, in order per chat.
func TestKilledAfterAckAnsweredExactlyOnce(t *testing.T) {
	r := testinfra.Redis(t)
	bin := filepath.Join(t.TempDir(), "gateway-line")
	build := exec.Command("go", "build", "-o", bin, "./cmd/gateway-line")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	line := linetest.NewServer(testToken)
	defer line.Close()
	chat := chatlinktest.NewFakeChat()
	chatSrv := chatlinktest.Start(t, chat)
	addrs, err := testinfra.FreeAddrs(2)
	if err != nil {
		t.Fatal(err)
	}
	// addr is the public listener (the webhook); the internal one only serves the suite.
	addr, internal := addrs[0], addrs[1]
	env := append(append(os.Environ(), testinfra.AuthEnv(service.Name)...),
		"PICOCLAW_SERVICES_GATEWAY_LINE_PUBLIC_LISTEN="+addr,
		"PICOCLAW_SERVICES_GATEWAY_LINE_LISTEN="+internal,
		"PICOCLAW_SERVICES_CHAT_MIO_URL="+chatSrv.URL,
		"PICOCLAW_REDIS_ADDR="+r.Addr,
		"PICOCLAW_REDIS_KEY_PREFIX="+r.Prefix,
		"PICOCLAW_LINE_API_BASE_URL="+line.URL,
		"PICOCLAW_LINE_ALLOWED_USERS="+allowed+","+allowed2,
		"PICOCLAW_LINE_INBOX_BLOCK=100ms",
		"PICOCLAW_LINE_INBOX_CLAIM_IDLE=1s",
		"LINE_CHANNEL_SECRET="+testSecret,
		"LINE_CHANNEL_ACCESS_TOKEN="+testToken,
	)
	first := startBinary(t, bin, append(env, "PICOCLAW_LINE_INBOX_CONSUMER=host-a"), addr)

	now := nowMillis()
	events := []linetest.Event{
		linetest.TextEvent("01EVKILL1", allowed, "", "rt-kill1", "block", now, false),
		linetest.TextEvent("01EVKILL2", allowed, "", "rt-kill2", "after the first", now, false),
		linetest.TextEvent("01EVKILL3", allowed2, "", "rt-kill3", "block", now, false),
	}
	for _, tok := range []string{"rt-kill1", "rt-kill2", "rt-kill3"} {
		line.IssueReplyToken(tok)
	}
	res, err := linetest.Post(http.DefaultClient, "http://"+addr+service.WebhookPath, testSecret, linetest.Body(events...))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("webhook: %d", res.StatusCode)
	}
	// Both chats are in chat-mio's hands; nothing has been answered yet.
	seen := map[string]bool{}
	for len(seen) < 2 {
		select {
		case id := <-chat.Started:
			seen[id] = true
		case <-time.After(15 * time.Second):
			t.Fatalf("processing did not start: %v", seen)
		}
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	if n := len(line.Sent()); n != 0 {
		t.Fatalf("%d answers before the crash", n)
	}
	close(chat.Release) // chat-mio answers from now on

	startBinary(t, bin, append(env, "PICOCLAW_LINE_INBOX_CONSUMER=host-b"), addr)
	stream := r.Prefix + "inbox:line"
	waitFor(t, "every event answered and acknowledged", func() bool {
		return len(line.Sent()) == 3 && r.Client.XPending(context.Background(), stream, service.Name).Val().Count == 0
	})
	time.Sleep(300 * time.Millisecond) // room for a duplicate to show up
	sent := line.Sent()
	if len(sent) != 3 {
		t.Fatalf("%d answers for 3 events", len(sent))
	}
	var order []string
	for _, s := range sent {
		if s.Kind != "push" {
			t.Errorf("redelivered event answered with %s", s.Kind)
		}
		if s.To == allowed {
			order = append(order, s.Messages[0].Text)
		}
	}
	for _, id := range []string{"01EVKILL1", "01EVKILL2", "01EVKILL3"} {
		if !hasSent(line, "push", "", domain.RetryKey("event:"+id)) {
			t.Errorf("event %s not answered with its retry key", id)
		}
	}
	if len(order) != 2 || order[0] != "echo: block" || order[1] != "echo: after the first" {
		t.Errorf("chat order %v", order)
	}
	if p := line.Problems(); len(p) > 0 {
		t.Errorf("LINE API rule violations: %v", p)
	}
}

func startBinary(t *testing.T, bin string, env []string, addr string) *exec.Cmd {
	t.Helper()
	logs := &chatlinktest.SyncBuffer{}
	cmd := exec.Command(bin)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}
		if t.Failed() {
			t.Logf("gateway log:\n%s", logs.String())
		}
	})
	waitFor(t, fmt.Sprintf("gateway on %s", addr), func() bool {
		res, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	return cmd
}
