//go:build !serveronly

package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
)

// GET /v1/images lists the image audit log to approvers only, filtered by job and time.
func TestListImages(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, id := range []string{"job_20260301_001", "job_20260301_002"} {
		if _, err := f.svc.RecordImage(ctx, app.ImageInput{JobID: id, SessionID: "line:U1", Data: []byte("jpeg " + id), MIMEType: "image/jpeg",
			Provider: "ollama", Model: "llava"}); err != nil {
			t.Fatal(err)
		}
	}
	if code, _ := f.do(t, http.MethodGet, "/v1/images", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("without a token: %d", code)
	}
	code, body := f.do(t, http.MethodGet, "/v1/images", token, nil)
	imgs, _ := body["images"].([]any)
	if code != http.StatusOK || len(imgs) != 2 || imgs[0].(map[string]any)["job_id"] != "job_20260301_002" {
		t.Fatalf("list: %d %v", code, body)
	}
	first := imgs[1].(map[string]any)
	if first["provider"] != "ollama" || first["model"] != "llava" || first["mime_type"] != "image/jpeg" || len(first["sha256"].(string)) != 64 ||
		first["size_bytes"] != float64(len("jpeg job_20260301_001")) || first["kept"] != false {
		t.Errorf("record %v", first)
	}
	code, body = f.do(t, http.MethodGet, "/v1/images?job=JOB_20260301_001&since=1h", token, nil)
	if imgs, _ := body["images"].([]any); code != http.StatusOK || len(imgs) != 1 {
		t.Fatalf("by job: %d %v", code, body)
	}
	if code, _ := f.do(t, http.MethodGet, "/v1/images?since=yesterday", token, nil); code != http.StatusBadRequest {
		t.Errorf("bad since: %d", code)
	}
}
