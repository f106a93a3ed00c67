package service_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink/chatlinktest"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

// TestApprovalCardAsFlex: an approval request with its card reaches LINE as one Flex message
// that passes the Messaging API's definitions, reads the same without buttons (the alt text
// holds the typed commands), links the console, and whose approve button posts the same data
// a confirm template would.
func TestApprovalCardAsFlex(t *testing.T) {
	h := start(t, nil)
	h.ask(t, "01EVCARD", "approve card")
	msgs := h.line.Sent()[0].Messages
	if len(msgs) != 1 || msgs[0].Type != "flex" {
		t.Fatalf("messages %+v", msgs)
	}
	job := "job_20261121_001"
	for _, c := range []string{"/approve " + job, "/deny " + job} {
		if !strings.Contains(msgs[0].AltText, c) {
			t.Errorf("alt text lacks %q: %q", c, msgs[0].AltText)
		}
	}
	if u := msgs[0].FlexURIs(); len(u) != 1 || u[0] != "https://picoclaw.example/ui/#/jobs/"+job {
		t.Errorf("console links %v", u)
	}
	pbs := msgs[0].Postbacks()
	if len(pbs) != 3 || pbs[0].DisplayText != "/approve "+job || pbs[1].DisplayText != "/deny "+job {
		t.Fatalf("postbacks %+v", pbs)
	}
	tok2 := "rt-01EVCARDPRESS-" + allowed
	h.line.IssueReplyToken(tok2)
	h.post(t, testSecret, fakeline.Body(fakeline.PostbackEvent("01EVCARDPRESS", allowed, tok2, pbs[0].Data, nowMillis())))
	channeltest.WaitFor(t, "press answer", func() bool { return hasSent(h.line, "reply", tok2, "") })
	var got *commonv1.Action
	for _, r := range h.Chat.Requests() {
		if r.GetEventId() == "01EVCARDPRESS" {
			got = r.GetAction()
		}
	}
	if got.GetKind() != commonv1.ActionKind_ACTION_KIND_APPROVE || got.GetJobId() != job {
		t.Errorf("action %v", got)
	}
	assertClean(t, h)
}

// TestScreenshotAsImage: a reply's screenshot reaches LINE as an image message whose HTTPS
// address, fetched from the gateway's public listener (behind the TLS proxy the base URL
// names), returns the picture; a tampered address is refused.
func TestScreenshotAsImage(t *testing.T) {
	const base = "https://line-gw.example.test/bot"
	h := start(t, func(c *service.Config) { c.Line.PublicBaseURL = base })
	h.ask(t, "01EVSHOT", "screenshot")
	msgs := h.line.Sent()[0].Messages
	if len(msgs) != 2 || msgs[0].Type != "text" || msgs[1].Type != "image" {
		t.Fatalf("messages %+v", msgs)
	}
	img := msgs[1]
	if !strings.HasPrefix(img.OriginalContentURL, base+"/line/media/") || img.PreviewImageURL == "" {
		t.Fatalf("image %+v", img)
	}
	// The TLS proxy strips the base path and forwards to the public listener.
	local := func(u string) string {
		p, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		return h.URL + strings.TrimPrefix(p.Path, "/bot") + "?" + p.RawQuery
	}
	get := func(u string) (int, []byte, string) {
		res, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b, res.Header.Get("Content-Type")
	}
	code, body, ctype := get(local(img.OriginalContentURL))
	if code != http.StatusOK || ctype != "image/png" || !bytes.Equal(body, chatlinktest.PNG()) {
		t.Fatalf("fetch: %d %s %d bytes", code, ctype, len(body))
	}
	if code, _, _ := get(local(img.PreviewImageURL)); code != http.StatusOK {
		t.Errorf("preview: %d", code)
	}
	tampered := strings.Replace(local(img.OriginalContentURL), "&s=", "&s=x", 1)
	if code, _, _ := get(tampered); code != http.StatusForbidden {
		t.Errorf("tampered signature: %d, want 403", code)
	}
	later := local(img.OriginalContentURL)
	p, _ := url.Parse(later)
	q := p.Query()
	q.Set("e", "9999999999")
	p.RawQuery = q.Encode()
	if code, _, _ := get(p.String()); code != http.StatusForbidden {
		t.Errorf("extended expiry: %d, want 403", code)
	}
	assertClean(t, h)
}

// TestScreenshotWithoutPublicURL: without line.public_base_url the screenshot is named by where
// the job keeps it, in text, and nothing fails.
func TestScreenshotWithoutPublicURL(t *testing.T) {
	h := start(t, nil)
	h.ask(t, "01EVSHOTTEXT", "screenshot")
	msgs := h.line.Sent()[0].Messages
	if len(msgs) != 1 || msgs[0].Type != "text" || !strings.Contains(msgs[0].Text, "/000-screenshot.png") {
		t.Fatalf("messages %+v", msgs)
	}
	assertClean(t, h)
}

// TestPushedScreenshots: a result pushed through NotificationService with screenshots is stored
// in the outbox and sent as image messages after its text; an image over the size limit is
// named by where the job keeps it instead.
func TestPushedScreenshots(t *testing.T) {
	h := start(t, func(c *service.Config) { c.Line.PublicBaseURL = "https://line-gw.example.test" })
	c := gatewayv1connect.NewNotificationServiceClient(rpcserver.NewHTTPClient(), h.Internal, testinfra.AsSuite(t, svcauth.GatewayLine))
	png := chatlinktest.PNG()
	big := append(append([]byte{}, png...), make([]byte, chatlink.MaxImageBytes)...)
	res, err := c.Push(context.Background(), &gatewayv1.PushRequest{SessionId: "line:" + allowed, JobId: "job_20261121_010", RetryKey: "shots",
		Messages: []*commonv1.ReplyMessage{{Text: "job_20261121_010 の結果: 完了", JobId: "job_20261121_010", Images: []*commonv1.Image{
			{ContentType: "image/png", Data: png, Artifact: "artifacts/job_20261121_010/001-screenshot.png"},
			{ContentType: "image/png", Data: big, Artifact: "artifacts/job_20261121_010/002-screenshot.png"},
		}}}})
	if err != nil || res.GetDelivered() != 1 {
		t.Fatalf("push: %v %v", res, err)
	}
	channeltest.WaitFor(t, "push", func() bool { return len(h.sentTo(allowed)) == 1 && h.Pending() == 0 })
	msgs := h.sentTo(allowed)[0].Messages
	if len(msgs) != 2 || msgs[0].Type != "text" || msgs[1].Type != "image" {
		t.Fatalf("messages %+v", msgs)
	}
	if !strings.Contains(msgs[0].Text, "002-screenshot.png") || strings.Contains(msgs[0].Text, "001-screenshot.png") {
		t.Errorf("text %q: want only the big screenshot named", msgs[0].Text)
	}
	assertClean(t, h)
}
