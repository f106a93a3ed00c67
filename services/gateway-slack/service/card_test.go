package service_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink/chatlinktest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/domain"
)

// TestApprovalCardAsBlocks: an approval request with its card is posted as Block Kit blocks
// that pass Slack's block definitions (header, code blocks of the changed lines, console link,
// the usual decision buttons) with a text fallback, and its approve button works as before.
func TestApprovalCardAsBlocks(t *testing.T) {
	h := start(t, nil)
	thread := "1700000600.000100"
	h.event(t, fakeslack.EventBody("EvCard", fakeslack.Mention(allowed, "C600", thread, "", "approve card")), nil)
	channeltest.WaitFor(t, "approval card", func() bool { return len(h.postsIn("C600", thread)) == 1 })
	p := h.postsIn("C600", thread)[0]
	job := "job_20261121_001"
	if !strings.Contains(p.Text, "/approve "+job) {
		t.Errorf("fallback text lacks the typed command: %q", p.Text)
	}
	var header, code, link bool
	var actions *fakeslack.Block
	for i, b := range p.Blocks {
		switch {
		case b.Type == "header":
			header = strings.Contains(b.Text.Text, job)
		case b.Type == "section" && strings.Contains(b.Text.Text, "```"):
			code = true
		case b.Type == "section" && strings.Contains(b.Text.Text, "<https://picoclaw.example/ui/#/jobs/"+job+"|"):
			link = true
		case b.Type == "actions":
			actions = &p.Blocks[i]
		}
	}
	if !header || !code || !link || actions == nil || actions.BlockID != "decision" {
		t.Fatalf("blocks %+v", p.Blocks)
	}
	btn := actions.Elements[0]
	got, err := domain.ParseButton(btn.ActionID, btn.Value)
	if err != nil || btn.ActionID != "approve" || got.JobID != job {
		t.Fatalf("approve button %+v (%+v, %v)", btn, got, err)
	}
	if code := h.interact(t, fakeslack.BlockAction(allowed, "C600", p.TS, thread, p.Text, "trigger-card", btn.ActionID, btn.Value)); code != http.StatusOK {
		t.Fatalf("interactive: %d", code)
	}
	channeltest.WaitFor(t, "decision", func() bool {
		for _, r := range h.Chat.Requests() {
			if a := r.GetAction(); a != nil && a.GetKind() == commonv1.ActionKind_ACTION_KIND_APPROVE && a.GetJobId() == job {
				return true
			}
		}
		return false
	})
	assertClean(t, h)
}

// TestScreenshotUploaded: a reply's screenshot is shared in the thread with Slack's upload flow
// (files.getUploadURLExternal, the bytes, files.completeUploadExternal) after its text.
func TestScreenshotUploaded(t *testing.T) {
	h := start(t, nil)
	thread := "1700000700.000100"
	h.event(t, fakeslack.EventBody("EvShot", fakeslack.Mention(allowed, "C700", thread, "", "screenshot")), nil)
	channeltest.WaitFor(t, "upload", func() bool { return len(h.slack.Uploads()) == 1 })
	up := h.slack.Uploads()[0]
	if up.Channel != "C700" || up.ThreadTS != thread || up.Filename != "screenshot.png" || !bytes.Equal(up.Data, chatlinktest.PNG()) {
		t.Fatalf("upload %+v", up)
	}
	if up.InitialComment != "https://example.com/" {
		t.Errorf("caption %q", up.InitialComment)
	}
	if posts := h.postsIn("C700", thread); len(posts) != 1 || !strings.Contains(posts[0].Text, "done") {
		t.Errorf("posts %+v", posts)
	}
	channeltest.WaitFor(t, "sent", func() bool { return h.Pending() == 0 })
	assertClean(t, h)
}
