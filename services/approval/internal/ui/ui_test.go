package ui_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/ui"
)

func router() http.Handler {
	r := chi.NewRouter()
	ui.Register(func(method, pattern string, h http.Handler) { r.Method(method, pattern, h) })
	return r
}

func TestServesEmbeddedAssets(t *testing.T) {
	tests := []struct {
		path, wantType, wantBody string
	}{
		{"/ui/", "text/html", `<script src="app.js" defer></script>`},
		{"/ui/app.js", "javascript", "textContent"},
		{"/ui/app.css", "text/css", ".diff .add"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			router().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d", rec.Code)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.Contains(ct, tc.wantType) {
				t.Errorf("content type %q, want %q", ct, tc.wantType)
			}
			if !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Errorf("body lacks %q", tc.wantBody)
			}
			csp := rec.Header().Get("Content-Security-Policy")
			for _, want := range []string{"script-src 'self'", "default-src 'none'", "frame-ancestors 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Error("missing nosniff")
			}
		})
	}
}

func TestRedirectsAndMisses(t *testing.T) {
	rec := httptest.NewRecorder()
	router().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui", nil))
	if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/ui/" {
		t.Errorf("/ui: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	rec = httptest.NewRecorder()
	router().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/nope.js", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("/ui/nope.js: %d", rec.Code)
	}
}

// TestNoMarkupSinks keeps the console's promise that API text only ever becomes text: the script
// must not use any API that parses a string as HTML, and the page must carry no inline script.
func TestNoMarkupSinks(t *testing.T) {
	for _, tc := range []struct {
		path string
		bad  *regexp.Regexp
	}{
		{"/ui/app.js", regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|\beval\(|new Function`)},
		{"/ui/", regexp.MustCompile(`<script>|<script [^>]*>[^<]+</script>|\son[a-z]+=`)},
	} {
		rec := httptest.NewRecorder()
		router().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		body, _ := io.ReadAll(rec.Body)
		if m := tc.bad.Find(body); m != nil {
			t.Errorf("%s uses %q", tc.path, m)
		}
	}
}
