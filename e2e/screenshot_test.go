package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakemcp"
)

// TestLINEScreenshotFlow: a browser job approved on LINE runs against the MCP Chrome bridge,
// and its screenshot reaches the LINE chat as an image message whose HTTPS address (the
// gateway's public listener behind the TLS proxy line.public_base_url names) returns the
// picture the bridge took; a tampered address is refused.
func TestLINEScreenshotFlow(t *testing.T) {
	bridge, err := fakemcp.Start(fakemcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bridge.Close)
	const base = "https://line.e2e.test"
	s := startSuite(t, binDir,
		"PICOCLAW_EXECUTOR_MCP_CHROME_BRIDGE_URL="+bridge.URL(),
		"PICOCLAW_EXECUTOR_BROWSER_ARTIFACTS_DIR="+t.TempDir(),
		"PICOCLAW_LINE_PUBLIC_BASE_URL="+base)

	s.lineWebhook(t, lineEvent("01E2ESHOT0000000000000001", map[string]any{
		"type": "message", "message": map[string]any{"id": "1", "type": "text", "quoteToken": "q1",
			"text": "/code2 https://example.test/ の" + screenshotWord + "を撮って"},
	}))
	ask := waitMessage(t, "approval request", flowTimeout, s.lineMessages, s.line.Problems, func(m outMessage) bool {
		return len(m.Buttons) == 3
	})
	job := jobPattern.FindString(ask.text())
	var approve string
	for _, b := range ask.Buttons {
		if v, err := url.ParseQuery(b.Data); err == nil && v.Get("a") == "approve" && v.Get("j") == job {
			approve = b.Data
		}
	}
	if job == "" || approve == "" {
		t.Fatalf("approval request %+v", ask)
	}
	s.lineWebhook(t, lineEvent("01E2ESHOTPRESS00000000001", map[string]any{
		"type": "postback", "postback": map[string]any{"data": approve},
	}))
	var img fakeline.Message
	deadline := time.Now().Add(flowTimeout)
	for img.Type == "" {
		for _, sent := range s.line.Sent() {
			for _, m := range sent.Messages {
				if m.Type == "image" {
					img = m
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no image message; sent %+v; problems %v", s.line.Sent(), s.line.Problems())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if p := s.line.Problems(); len(p) > 0 {
		t.Fatalf("LINE problems: %v", p)
	}
	u, err := url.Parse(img.OriginalContentURL)
	if err != nil || !strings.HasPrefix(img.OriginalContentURL, base+"/line/media/") || img.PreviewImageURL == "" {
		t.Fatalf("image %+v", img)
	}
	get := func(rawQuery string) (int, []byte) {
		res, err := http.Get(s.publicURL("gateway-line", u.Path) + "?" + rawQuery)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	if code, body := get(u.RawQuery); code != http.StatusOK || !bytes.Equal(body, bridge.PNG) {
		t.Fatalf("fetching the image: %d, %d bytes (want the bridge's %d)", code, len(body), len(bridge.PNG))
	}
	if code, _ := get(strings.Replace(u.RawQuery, "s=", "s=x", 1)); code != http.StatusForbidden {
		t.Errorf("tampered address: %d, want 403", code)
	}
	for _, c := range bridge.Calls() {
		if c.Invalid != "" {
			t.Errorf("bridge call %s: %s", c.Tool, c.Invalid)
		}
	}
}

// TestSlackScreenshotFlow: a browser job approved on Slack shares its screenshot in the thread
// with Slack's upload flow (files.getUploadURLExternal, the bytes, files.completeUploadExternal).
func TestSlackScreenshotFlow(t *testing.T) {
	bridge, err := fakemcp.Start(fakemcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bridge.Close)
	s := startSuite(t, binDir,
		"PICOCLAW_EXECUTOR_MCP_CHROME_BRIDGE_URL="+bridge.URL(),
		"PICOCLAW_EXECUTOR_BROWSER_ARTIFACTS_DIR="+t.TempDir())
	const channel, threadTS = "CE2ESHOT", "1790000100.000001"
	s.slackEvent(t, "EvE2EShot1", map[string]any{
		"type": "app_mention", "user": slackUser, "channel": channel, "ts": threadTS, "event_ts": threadTS,
		"text": "<@" + slackBotUser + "> /code2 https://example.test/ の" + screenshotWord + "を撮って",
	})
	ask := waitMessage(t, "approval card", flowTimeout, s.slackMessages, s.slack.Problems, func(m outMessage) bool {
		return m.API == "chat.postMessage" && len(m.Buttons) == 3
	})
	var approve *button
	for i, b := range ask.Buttons {
		if b.Kind == "approve" {
			approve = &ask.Buttons[i]
		}
	}
	if approve == nil {
		t.Fatalf("approval request %+v", ask)
	}
	payload, err := json.Marshal(map[string]any{
		"type": "block_actions", "trigger_id": "e2e-shot-1",
		"user": map[string]any{"id": slackUser}, "team": map[string]any{"id": "TE2E"},
		"channel":   map[string]any{"id": channel},
		"container": map[string]any{"type": "message", "message_ts": ask.TS, "channel_id": channel},
		"message":   map[string]any{"ts": ask.TS, "thread_ts": threadTS, "text": ask.Texts[0]},
		"actions": []map[string]any{{"type": "button", "action_id": approve.Kind, "block_id": "decision",
			"value": approve.Data, "action_ts": fmt.Sprintf("%d.000100", time.Now().Unix())}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.slackPost(t, "/slack/interactive", "application/x-www-form-urlencoded", []byte(url.Values{"payload": {string(payload)}}.Encode()))
	deadline := time.Now().Add(flowTimeout)
	for len(s.slack.Uploads()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no upload; posts %+v; problems %v", s.slack.Posts(), s.slack.Problems())
		}
		time.Sleep(20 * time.Millisecond)
	}
	up := s.slack.Uploads()[0]
	if up.Channel != channel || up.ThreadTS != threadTS || !bytes.Equal(up.Data, bridge.PNG) {
		t.Fatalf("upload to %s:%s of %d bytes (want %d)", up.Channel, up.ThreadTS, len(up.Data), len(bridge.PNG))
	}
	if p := s.slack.Problems(); len(p) > 0 {
		t.Fatalf("Slack problems: %v", p)
	}
}
