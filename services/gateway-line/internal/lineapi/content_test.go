package lineapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// A content download answered with a redirect is not followed: the image is unavailable and
// nothing is fetched from the address the redirect names.
func TestContentDoesNotFollowRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n0000"))
	}))
	defer other.Close()
	data := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/img.png", http.StatusFound)
	}))
	defer data.Close()
	c, err := New(Config{Token: "token", BaseURL: data.URL, DataBaseURL: data.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Content(context.Background(), "12345", 1<<20); err == nil {
		t.Fatal("a redirected download was accepted")
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the redirect was followed (%d requests elsewhere)", n)
	}
}
