package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
)

// The embedded suite (SQLite, -tags sqliteonly) answers a LINE image with the vision model,
// records it in the image audit log `picoclaw images` lists, and with images.keep keeps the
// bytes under <data>/images.
func TestEmbeddedImageTurn(t *testing.T) {
	dir := t.TempDir()
	bin := buildPicoclaw(t, dir)
	data, state := filepath.Join(dir, "data"), filepath.Join(dir, "state")
	line := fakeline.NewServer(crashLineToken)
	t.Cleanup(line.Close)
	vision := fakellm.Start(t, fakellm.Ollama, func(req fakellm.Request) fakellm.Answer {
		return fakellm.Answer{Content: "猫が写っています。"}
	}, fakellm.WithModels("qwen2.5vl:7b"))
	pic := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"), bytes.Repeat([]byte{0}, 32)...)
	line.AddContent("mEmbImg", pic, "image/png")
	s := startRun(t, bin, data, "LINE_CHANNEL_SECRET="+crashLineSecret, "LINE_CHANNEL_ACCESS_TOKEN="+crashLineToken,
		"PICOCLAW_LINE_API_BASE_URL="+line.URL, "PICOCLAW_LINE_DATA_API_BASE_URL="+line.URL, "PICOCLAW_LINE_ALLOWED_USERS=Uemb",
		"PICOCLAW_MODELS_VISION_MODEL=qwen2.5vl:7b", "PICOCLAW_MODELS_VISION_BASE_URL="+vision.URL, "PICOCLAW_IMAGES_KEEP=true",
		"XDG_STATE_HOME="+state)
	hook := s.expect(webhookRE, 60*time.Second)[1]
	s.expect(promptRE, 60*time.Second)
	ev := fakeline.ImageEvent("EvEmbImg", "Uemb", "rt-emb", time.Now().UnixMilli())
	ev["message"].(map[string]any)["id"] = "mEmbImg"
	line.IssueReplyToken("rt-emb")
	res, err := fakeline.Post(http.DefaultClient, hook, crashLineSecret, fakeline.Body(ev))
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("webhook: %v %v", res, err)
	}
	res.Body.Close()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(strings.Join(answersTo(line, "Uemb"), "\n"), "猫が写っています") {
		time.Sleep(50 * time.Millisecond)
	}
	if got := answersTo(line, "Uemb"); len(got) != 1 || !strings.Contains(got[0], "猫が写っています") {
		t.Fatalf("answers %v", got)
	}
	cmd := exec.Command(bin, "images", "-o", "json")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("picoclaw images: %v\n%s", err, out)
	}
	var list struct {
		Images []struct {
			JobID, SHA256, MIMEType, Provider, Model string
			Kept                                     bool
		} `json:"images"`
	}
	sum := sha256.Sum256(pic)
	sha := hex.EncodeToString(sum[:])
	if json.Unmarshal(out, &list) != nil || len(list.Images) != 1 || list.Images[0].SHA256 != sha || list.Images[0].Provider != "ollama" ||
		list.Images[0].Model != "qwen2.5vl:7b" || !list.Images[0].Kept {
		t.Fatalf("picoclaw images -o json:\n%s", out)
	}
	if kept, err := os.ReadFile(filepath.Join(data, "images", sha+".png")); err != nil || !bytes.Equal(kept, pic) {
		t.Fatalf("kept image: %v", err)
	}
	s.quit()
}
