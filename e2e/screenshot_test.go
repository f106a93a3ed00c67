package e2e

import (
	"bytes"
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
