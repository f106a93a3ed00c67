package service_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/service"
)

var jpegBytes = append([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"), bytes.Repeat([]byte{7}, 64)...)

// TestFileShares: a direct message sharing an image is downloaded from the files host with the
// bot token and sent to chat-mio with its caption under a JobID of its own; an image over
// images.max_bytes, a shared file that is not an image and a link to another host are answered
// without chat-mio (and the other host is never asked).
func TestFileShares(t *testing.T) {
	h := start(t, func(c *service.Config) { c.Images.MaxBytes = 1024 })
	pic := h.slack.AddFile("F0IMG", "cat.jpg", "image/jpeg", jpegBytes)
	if code, _ := h.event(t, fakeslack.EventBody("Ev0IMG", fakeslack.FileShareDM(allowed, "D0001", "1700000001.000100", "これは何？", pic)), nil); code != 200 {
		t.Fatalf("event: %d", code)
	}
	channeltest.WaitFor(t, "the image at chat-mio", func() bool { return h.Chat.CountEvent("Ev0IMG") == 1 })
	req := h.Chat.Requests()[0]
	if img := req.GetImage(); img == nil || !bytes.Equal(img.GetData(), jpegBytes) || img.GetMimeType() != "image/jpeg" ||
		img.GetSource() != "slack:F0IMG" || req.GetText() != "これは何？" {
		t.Fatalf("chat-mio got %+v (text %q)", req.GetImage(), req.GetText())
	}
	if _, job := h.Chat.TraceOf(t, "Ev0IMG"); !jobid.Valid(job) {
		t.Errorf("the image turn has no JobID: %q", job)
	}
	big := h.slack.AddFile("F0BIG", "big.png", "image/png", bytes.Repeat([]byte{1}, 4096))
	doc := h.slack.AddFile("F0PDF", "spec.pdf", "application/pdf", []byte("%PDF-1.7"))
	elsewhere := h.slack.AddFile("F0EXT", "x.jpg", "image/jpeg", jpegBytes)
	elsewhere["url_private_download"] = "http://127.0.0.1:1/files-pri/T0001-F0EXT/download/x.jpg"
	for i, c := range []struct {
		file map[string]any
		want string
	}{
		{big, "上限は 1 KB"},
		{doc, "読めるのは文章と画像"},
		{elsewhere, "外部のサービス"},
	} {
		ts := "1700000002.00010" + string(rune('0'+i))
		id := "Ev0REF" + string(rune('0'+i))
		if code, _ := h.event(t, fakeslack.EventBody(id, fakeslack.FileShareDM(allowed, "D0001", ts, "", c.file)), nil); code != 200 {
			t.Fatalf("event: %d", code)
		}
		channeltest.WaitFor(t, id+"'s answer", func() bool { return len(h.postsIn("D0001", ts)) == 1 })
		if got := h.postsIn("D0001", ts)[0]; !strings.Contains(got.Text, c.want) {
			t.Errorf("%s answered %q, want %q", id, got.Text, c.want)
		}
		if h.Chat.CountEvent(id) != 0 {
			t.Errorf("chat-mio was asked about %s", id)
		}
	}
	if got := h.slack.Downloads(); len(got) != 1 || got[0] != "F0IMG" {
		t.Errorf("downloads %v", got)
	}
}
