package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	gatewayline "github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

const (
	lineSecret = "cli-test-line-secret-0123456789abcdef"
	lineToken  = "cli-test-line-token-0123456789abcdefgh"
	lineUser   = "Ucli00000000000000000000000000001"
)

// startLine runs the real gateway-line against a fake LINE whose first push is refused (400),
// so the answer to one message dies in the outbox; it returns the gateway's public URL.
func startLine(t *testing.T) (*channeltest.Gateway, *fakeline.Server) {
	t.Helper()
	api := fakeline.NewServer(lineToken)
	t.Cleanup(api.Close)
	api.Outage(1, fakeline.Fault{Status: http.StatusBadRequest})
	gw := channeltest.Start(t, "line", gatewayline.Name, func(ctx context.Context, g *channeltest.Gateway) error {
		cfg := gatewayline.DefaultConfig()
		g.Configure(gatewayline.Name, &cfg.Common, &cfg.Line.Settings, &cfg.Wiring, api.URL, lineUser)
		cfg.Line.ChannelSecret, cfg.Line.ChannelAccessToken = lineSecret, lineToken
		cfg.Line.ApproverTokens = config.Secret("ops:" + token)
		return gatewayline.Run(ctx, cfg)
	})
	old := time.Now().Add(-2 * time.Minute).UnixMilli() // no reply token: the answer is pushed
	res, err := fakeline.Post(http.DefaultClient, gw.URL+gatewayline.WebhookPath, lineSecret,
		fakeline.Body(fakeline.TextEvent("01EVCLIDEAD", lineUser, "", "", "hello", old, false)))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	channeltest.WaitFor(t, "the dead letter", func() bool {
		return gw.Redis.Client.XLen(context.Background(), gw.Outbox+":dead").Val() == 1 && gw.Pending() == 0
	})
	return gw, api
}

// runGateway executes the CLI with the LINE gateway's public URL and tok.
func runGateway(t *testing.T, lineURL, tok string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := map[string]string{"PICOCLAW_TOKEN": tok, "PICOCLAW_SERVICES_GATEWAY_LINE_PUBLIC_URL": lineURL,
		"PICOCLAW_SERVICES_GATEWAY_SLACK_PUBLIC_URL": "http://127.0.0.1:1"}
	code := Main(append([]string{"--locale", "en"}, args...), IO{In: strings.NewReader(""), Out: &out, Err: &errOut,
		Getenv: func(k string) string { return env[k] }})
	return code, out.String(), errOut.String()
}

// TestDeadLettersAgainstTheRealGateway: list, show, replay (twice: one delivery) and drop a dead
// letter of the real gateway-line; wrong or missing tokens and unknown ids get their exit codes.
func TestDeadLettersAgainstTheRealGateway(t *testing.T) {
	gw, api := startLine(t)

	code, out, errOut := runGateway(t, gw.URL, token, "deadletters", "list")
	if code != ExitOK || !strings.HasPrefix(out, "ID  ") || !strings.Contains(out, "TRIES") ||
		!strings.Contains(out, "line:outbox:") || !strings.Contains(out, "permanent") ||
		!strings.Contains(out, "400") || !strings.Contains(errOut, "gateway-slack is not running at http://127.0.0.1:1") {
		t.Fatalf("list: %d\n%s\n%s", code, out, errOut)
	}
	var list channel.DeadLetterList
	code, out, _ = runGateway(t, gw.URL, token, "deadletters", "list", "--channel", "line", "--json")
	if code != ExitOK || json.Unmarshal([]byte(out), &list) != nil || len(list.DeadLetters) != 1 {
		t.Fatalf("list --json: %d %s", code, out)
	}
	id := "line:" + list.DeadLetters[0].ID
	code, out, _ = runGateway(t, gw.URL, token, "deadletters", "show", id)
	if code != ExitOK || !strings.Contains(out, "reason: ") || !strings.Contains(out, "event: event:01EVCLIDEAD") ||
		!strings.Contains(out, "text: echo: hello") || !strings.Contains(out, "attempts: 1") {
		t.Fatalf("show: %d %s", code, out)
	}

	for _, tc := range []struct {
		args []string
		tok  string
		want int
	}{
		{[]string{"deadletters", "list", "--channel", "line"}, "", ExitUnauthorized},
		{[]string{"deadletters", "replay", id}, "someone-else-0123456789abcdefghijklmn", ExitUnauthorized},
		{[]string{"deadletters", "show", "line:outbox:1-999"}, token, ExitNotFound},
		{[]string{"deadletters", "show", "teams:outbox:1-1"}, token, ExitUsage},
		{[]string{"deadletters", "list", "--queue", "sideways"}, token, ExitUsage},
		{[]string{"deadletters", "shuffle"}, token, ExitUsage},
	} {
		if code, out, errOut := runGateway(t, gw.URL, tc.tok, tc.args...); code != tc.want {
			t.Errorf("%v: exit %d, want %d\n%s%s", tc.args, code, tc.want, out, errOut)
		}
	}

	code, out, _ = runGateway(t, gw.URL, token, "deadletters", "replay", id)
	if code != ExitOK || !strings.Contains(out, "replayed (entry") {
		t.Fatalf("replay: %d %s", code, out)
	}
	code, out, _ = runGateway(t, gw.URL, token, "deadletters", "replay", id)
	if code != ExitOK || !strings.Contains(out, "already replayed") || !strings.Contains(out, "nothing was enqueued") {
		t.Fatalf("second replay: %d %s", code, out)
	}
	channeltest.WaitFor(t, "the replayed answer", func() bool { return len(api.Sent()) == 1 && gw.Pending() == 0 })
	if sent := api.Sent(); len(sent) != 1 || sent[0].To != lineUser || sent[0].Messages[0].Text != "echo: hello" {
		t.Fatalf("sent %+v", sent)
	}
	code, out, _ = runGateway(t, gw.URL, token, "deadletters", "drop", id)
	if code != ExitOK || !strings.Contains(out, "dropped") {
		t.Fatalf("drop: %d %s", code, out)
	}
	if code, _, _ := runGateway(t, gw.URL, token, "deadletters", "drop", id); code != ExitNotFound {
		t.Fatalf("second drop: exit %d", code)
	}
	code, out, _ = runGateway(t, gw.URL, token, "deadletters", "list", "--channel", "line")
	if code != ExitOK || !strings.Contains(out, "No dead letters.") {
		t.Fatalf("list after drop: %d %s", code, out)
	}
}
