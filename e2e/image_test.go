package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
)

// e2ePNG is a small PNG (signature and IHDR are what type checks read).
var e2ePNG = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"), bytes.Repeat([]byte{0}, 100)...)

// TestLINEImageToVisionModel (and a Slack file share): a LINE image is fetched from the blob endpoint, recorded in
// approval's image audit log and sent to the vision model (Ollama's /api/chat carries it in
// images); the audit row names the turn's JobID, the hash, size, type and destination. A
// sticker gets the "not supported" reply, an image over images.max_bytes the cap reply, and
// neither reaches a model.
func TestLINEImageToVisionModel(t *testing.T) {
	s := startSuite(t, binDir, "PICOCLAW_MODELS_VISION_MODEL="+visionModel, "PICOCLAW_IMAGES_MAX_BYTES=2048")
	s.line.AddContent("mIMG1", e2ePNG, "image/png")
	s.lineWebhook(t, lineEvent("01E2EIMAGE000000000000001", map[string]any{
		"type": "message", "message": map[string]any{"id": "mIMG1", "type": "image", "quoteToken": "qi1",
			"contentProvider": map[string]any{"type": "line"}},
	}))
	waitMessage(t, "the vision model's answer", flowTimeout, s.lineMessages, s.line.Problems, func(m outMessage) bool {
		return strings.Contains(m.text(), "猫が写っています")
	})
	var sent *fakellm.Request
	for _, r := range s.ollama.Requests() {
		for _, m := range r.Messages {
			if len(m.Images) > 0 {
				sent = &r
			}
		}
	}
	if sent == nil || sent.Model != visionModel {
		t.Fatalf("no /api/chat request to %s with images: %+v", visionModel, sent)
	}
	last := sent.Messages[len(sent.Messages)-1]
	if last.Role != "user" || len(last.Images) != 1 || last.Images[0] != base64.StdEncoding.EncodeToString(e2ePNG) {
		t.Fatalf("the image on the wire: %+v", last)
	}

	var log struct {
		Images []struct {
			JobID     string `json:"job_id"`
			SessionID string `json:"session_id"`
			SHA256    string `json:"sha256"`
			SizeBytes int64  `json:"size_bytes"`
			MIMEType  string `json:"mime_type"`
			Provider  string `json:"provider"`
			Model     string `json:"model"`
			Kept      bool   `json:"kept"`
		} `json:"images"`
	}
	s.approvalAPI(t, "GET", "/v1/images", nil, &log)
	sum := sha256.Sum256(e2ePNG)
	if len(log.Images) != 1 {
		t.Fatalf("image audit log: %+v", log.Images)
	}
	rec := log.Images[0]
	if !jobid.Valid(rec.JobID) || rec.SessionID != "line:"+lineUser || rec.SHA256 != hex.EncodeToString(sum[:]) ||
		rec.SizeBytes != int64(len(e2ePNG)) || rec.MIMEType != "image/png" || rec.Provider != "ollama" || rec.Model != visionModel || rec.Kept {
		t.Fatalf("audit record %+v", rec)
	}
	// The record names the turn: chat-mio's answer to the image is logged under that JobID.
	if logs := s.proc(t, "chat-mio").logs.String(); !strings.Contains(logs, `"job_id":"`+rec.JobID+`"`) ||
		!strings.Contains(logs, "chat.image_answered") {
		t.Errorf("chat-mio did not log the image turn under %s", rec.JobID)
	}

	// A sticker: told what is supported.
	s.lineWebhook(t, lineEvent("01E2ESTICKER0000000000001", map[string]any{
		"type": "message", "message": map[string]any{"id": "mSTK1", "type": "sticker", "packageId": "1", "stickerId": "1",
			"stickerResourceType": "STATIC", "quoteToken": "qs1"},
	}))
	waitMessage(t, "the unsupported reply", flowTimeout, s.lineMessages, s.line.Problems, func(m outMessage) bool {
		return strings.Contains(m.text(), "読めるのは文章と画像")
	})
	// An image over images.max_bytes (2 KB here): the cap reply.
	s.line.AddContent("mBIG1", append(append([]byte{}, e2ePNG...), bytes.Repeat([]byte{1}, 4096)...), "image/png")
	s.lineWebhook(t, lineEvent("01E2EBIGIMAGE000000000001", map[string]any{
		"type": "message", "message": map[string]any{"id": "mBIG1", "type": "image", "quoteToken": "qb1",
			"contentProvider": map[string]any{"type": "line"}},
	}))
	waitMessage(t, "the cap reply", flowTimeout, s.lineMessages, s.line.Problems, func(m outMessage) bool {
		return strings.Contains(m.text(), "上限は 2 KB")
	})
	s.approvalAPI(t, "GET", "/v1/images", nil, &log)
	if len(log.Images) != 1 {
		t.Errorf("the refused image reached the audit log (and a model): %+v", log.Images)
	}
	imageCalls := 0
	for _, r := range s.ollama.Requests() {
		for _, m := range r.Messages {
			if len(m.Images) > 0 {
				imageCalls++
			}
		}
	}
	if imageCalls != 1 {
		t.Errorf("%d model calls carried images, want 1", imageCalls)
	}

	// A Slack direct message sharing an image takes the same path.
	file := s.slack.AddFile("FE2EIMG1", "cat.png", "image/png", e2ePNG)
	s.slackEvent(t, "EvE2EIMAGE1", fakeslack.FileShareDM(slackUser, "DE2EIMG", "1700000100.000100", "これは？", file))
	waitMessage(t, "the vision model's answer on Slack", flowTimeout, s.slackMessages, s.slack.Problems, func(m outMessage) bool {
		return strings.Contains(m.text(), "猫が写っています")
	})
	s.approvalAPI(t, "GET", "/v1/images", nil, &log)
	if len(log.Images) != 2 || log.Images[0].SessionID != "slack:DE2EIMG:1700000100.000100" || log.Images[0].SHA256 != rec.SHA256 ||
		log.Images[0].JobID == rec.JobID || !jobid.Valid(log.Images[0].JobID) {
		t.Errorf("image audit log after the Slack share: %+v", log.Images)
	}
	s.noProblems(t)
}
