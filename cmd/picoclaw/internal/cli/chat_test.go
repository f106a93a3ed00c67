package cli

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink/chatlinktest"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// TestChatLoopOnTheChannelRuntime: typed lines go to chat-mio as the cli channel with the
// user's signed identity, replies and buttons are printed under the prompt, pushed notifications
// for the session appear on lines of their own, other sessions' are refused, and EOF ends.
func TestChatLoopOnTheChannelRuntime(t *testing.T) {
	chat := chatlinktest.NewFakeChat()
	chatSrv := chatlinktest.Start(t, chat)
	in, stdin := io.Pipe()
	out := &testinfra.SyncBuffer{}
	g := &globals{io: IO{In: in, Out: out, Err: io.Discard, Getenv: func(string) string { return "" }}, cfg: config.DefaultCommon(), locale: "en"}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- chatLoop(context.Background(), g, testinfra.Credentials(t, svcauth.CLI), "tester", chatSrv.URL, ln)
	}()
	waitOutput := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("output %q lacks %q", out.String(), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitOutput("session cli:tester — /help for commands, /quit to leave\n> ")

	if _, err := io.WriteString(stdin, "hello\n\napprove\n"); err != nil {
		t.Fatal(err)
	}
	waitOutput("Mio> echo: hello\n> > ")
	waitOutput("Mio> 承認が必要です: job_20261121_001\n     変更: docs/README.md\n     [] /approve job_20261121_001\n     [] /deny job_20261121_001\n> ")
	reqs := chat.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (blank lines are not sent)", len(reqs))
	}
	for _, r := range reqs {
		if r.GetChannel() != "cli" || r.GetSessionId() != "cli:tester" || r.GetUserId() != "tester" || r.GetLocale() != "en" ||
			!strings.HasPrefix(r.GetEventId(), "cli-") || r.GetIsGroup() {
			t.Errorf("request %v", r)
		}
	}

	push := gatewayv1connect.NewNotificationServiceClient(rpcserver.NewHTTPClient(), "http://"+ln.Addr().String(),
		testinfra.AsSuite(t, svcauth.CLI))
	res, err := push.Push(context.Background(), &gatewayv1.PushRequest{SessionId: "cli:tester", JobId: "job_20261121_001",
		Messages: []*commonv1.ReplyMessage{{Text: "late result\nsecond line"}}})
	if err != nil || res.GetDelivered() != 1 {
		t.Fatalf("push: %v %v", res, err)
	}
	waitOutput("\nMio> late result\n     second line\n> ")
	_, err = push.Push(context.Background(), &gatewayv1.PushRequest{SessionId: "cli:someone-else",
		Messages: []*commonv1.ReplyMessage{{Text: "not yours"}}})
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("push to another session: %v, want NotFound", err)
	}

	if _, err := io.WriteString(stdin, "invalid\n"); err != nil {
		t.Fatal(err)
	}
	waitOutput("!! ")
	_ = stdin.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chatLoop: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("chatLoop did not end at EOF")
	}
	if strings.Contains(out.String(), "not yours") {
		t.Error("another session's notification was printed")
	}
}
