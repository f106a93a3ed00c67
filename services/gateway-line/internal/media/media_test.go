package media

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink/chatlinktest"
)

func TestPublishServeExpire(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	s, err := New("https://gw.example", time.Hour, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	png := chatlinktest.PNG()
	u, err := s.Publish(chatlink.Image{ContentType: "image/png", Data: png})
	if err != nil {
		t.Fatal(err)
	}
	path := strings.TrimPrefix(u.Original, "https://gw.example")
	get := func(p string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, p, nil))
		return w
	}
	if w := get(path); w.Code != http.StatusOK || w.Body.String() != string(png) || w.Header().Get("Content-Type") != "image/png" {
		t.Fatalf("fresh: %d %q", w.Code, w.Header())
	}
	for name, p := range map[string]string{
		"bad signature": strings.Replace(path, "&s=", "&s=A", 1),
		"other name":    strings.Replace(path, Path, Path+"0", 1),
		"no signature":  strings.Split(path, "&s=")[0],
	} {
		if w := get(p); w.Code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, w.Code)
		}
	}
	now = now.Add(time.Hour)
	if w := get(path); w.Code != http.StatusNotFound {
		t.Errorf("expired: %d, want 404", w.Code)
	}
	if _, err := s.Publish(chatlink.Image{ContentType: "image/gif", Data: png}); err == nil {
		t.Error("a GIF was published")
	}
	if _, err := New("http://gw.example", time.Hour, nil); err == nil {
		t.Error("an http base was accepted")
	}
}

func TestBoundedBytes(t *testing.T) {
	s, err := New("https://gw.example", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, chatlink.MaxImageBytes)
	for range MaxBytes/len(big) + 5 {
		if _, err := s.Publish(chatlink.Image{ContentType: "image/jpeg", Data: big}); err != nil {
			t.Fatal(err)
		}
	}
	if s.bytes > MaxBytes || len(s.items) != len(s.order) {
		t.Fatalf("kept %d bytes in %d items (%d in order)", s.bytes, len(s.items), len(s.order))
	}
}
