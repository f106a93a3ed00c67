package service_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

// A tiny real PNG (the signature and an IHDR chunk are what sniffing reads).
var pngBytes = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"), bytes.Repeat([]byte{0}, 64)...)

// TestImageMessages: an image whose content LINE holds is fetched from the blob endpoint with
// the channel token and handed to chat-mio with its type, under a JobID of its own; one over
// images.max_bytes, one that is not an image, one hosted outside LINE and one whose content is
// gone are answered without chat-mio.
func TestImageMessages(t *testing.T) {
	h := start(t, func(c *service.Config) { c.Images.MaxBytes = 1024 })
	h.line.AddContent("m01EVIMG", pngBytes, "image/png")
	h.line.AddContent("m01EVBIG", append(append([]byte{}, pngBytes...), bytes.Repeat([]byte{1}, 2048)...), "image/png")
	h.line.AddContent("m01EVSVG", []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`), "image/svg+xml")
	post := func(ev fakeline.Event) {
		t.Helper()
		if got := h.post(t, testSecret, fakeline.Body(ev)); got != 200 {
			t.Fatalf("webhook: %d", got)
		}
	}
	post(fakeline.ImageEvent("01EVIMG", allowed, "rt-01EVIMG", nowMillis()))
	channeltest.WaitFor(t, "the image at chat-mio", func() bool { return h.Chat.CountEvent("01EVIMG") == 1 })
	req := h.Chat.Requests()[0]
	if img := req.GetImage(); img == nil || !bytes.Equal(img.GetData(), pngBytes) || img.GetMimeType() != "image/png" || img.GetSource() != "line:m01EVIMG" {
		t.Fatalf("chat-mio got %+v", req.GetImage())
	}
	if _, job := h.Chat.TraceOf(t, "01EVIMG"); !jobid.Valid(job) {
		t.Errorf("the image turn has no JobID: %q", job)
	}
	// The image's own answer is delivered before the refusals are counted, so each refusal is the
	// one message that follows.
	channeltest.WaitFor(t, "the image's answer", func() bool { return len(h.sentTo(allowed)) == 1 && h.Pending() == 0 })
	for _, c := range []struct {
		ev   fakeline.Event
		id   string
		want string
	}{
		{fakeline.ImageEvent("01EVBIG", allowed, "rt-01EVBIG", nowMillis()), "01EVBIG", "上限は 1 KB"},
		{fakeline.ImageEvent("01EVSVG", allowed, "rt-01EVSVG", nowMillis()), "01EVSVG", "JPEG・PNG・GIF・WebP だけ"},
		{fakeline.ExternalImageEvent("01EVEXT", allowed, "rt-01EVEXT", h.line.URL+"/v2/bot/message/m01EVIMG/content", nowMillis()), "01EVEXT", "外部のサービス"},
		{fakeline.ImageEvent("01EVGONE", allowed, "rt-01EVGONE", nowMillis()), "01EVGONE", "ダウンロードできませんでした"},
	} {
		before := len(h.sentTo(allowed))
		post(c.ev)
		channeltest.WaitFor(t, c.id+"'s answer", func() bool { return len(h.sentTo(allowed)) >= before+1 && h.Pending() == 0 })
		if n := len(h.sentTo(allowed)); n != before+1 {
			t.Fatalf("%s was answered %d times", c.id, n-before)
		}
		if got := h.sentTo(allowed)[before]; len(got.Messages) != 1 || !strings.Contains(got.Messages[0].Text, c.want) {
			t.Errorf("%s answered with %+v, want %q", c.id, got.Messages, c.want)
		}
		if n := h.Chat.CountEvent(c.id); n != 0 {
			t.Errorf("chat-mio was asked about %s", c.id)
		}
	}
	for _, id := range h.line.Fetched() {
		if id == "m01EVEXT" {
			t.Error("an external image was fetched")
		}
	}
}
