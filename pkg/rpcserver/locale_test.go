package rpcserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/bearer"
)

func TestRequestLocale(t *testing.T) {
	for _, tc := range []struct {
		query, accept, want string
	}{
		{"", "", "ja"},
		{"locale=en", "", "en"},
		{"locale=en-US", "ja", "en"},
		{"locale=ja", "en", "ja"},
		{"locale=fr", "en-GB,en;q=0.8", "en"}, // an unknown locale falls back to the header
		{"", "en", "en"},
		{"", "en-US,en;q=0.9,ja;q=0.8", "en"},
		{"", "fr-FR, ja;q=0.5, en;q=0.7", "en"},
		{"", "fr-FR, en;q=0.5, ja;q=0.7", "ja"},
		{"", "de, fr", "ja"},
		{"", "en;q=0, ja", "ja"},
		{"", "en;q=0", "ja"},
		{"", "*", "ja"},
		{"", "EN_us", "en"},
		{"", " en ; q=0.3 , de;q=0.9", "en"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/v1/jobs?"+tc.query, nil)
		if tc.accept != "" {
			r.Header.Set("Accept-Language", tc.accept)
		}
		if got := RequestLocale(r); got != tc.want {
			t.Errorf("locale %q, Accept-Language %q: %q, want %q", tc.query, tc.accept, got, tc.want)
		}
	}
}

func TestRESTTexts(t *testing.T) {
	if err := restTexts.Check(); err != nil {
		t.Fatal(err)
	}
}

// The guard's refusals keep their codes and speak the request's language.
func TestRequireApproverLocalised(t *testing.T) {
	tokens, err := bearer.Parse("ops:token-0123456789abcdef-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	h := RequireApprover(tokens, "test", nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, tc := range []struct {
		auth, query, accept string
		status              int
		code, message       string
	}{
		{"", "", "", 401, "unauthenticated", "Bearer トークンが必要です"},
		{"", "locale=en", "", 401, "unauthenticated", "a bearer token is required"},
		{"Bearer nobody-0123456789abcdef-0123456789", "", "en-US,en;q=0.9", 403, "unknown_approver", "the token does not belong to an approver"},
		{"Bearer nobody-0123456789abcdef-0123456789", "", "", 403, "unknown_approver", "このトークンは承認者のものではありません"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/x?"+tc.query, nil)
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		if tc.accept != "" {
			r.Header.Set("Accept-Language", tc.accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var body map[string]string
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if rec.Code != tc.status || body["code"] != tc.code || body["message"] != tc.message {
			t.Errorf("%+v: %d %v", tc, rec.Code, body)
		}
	}
}
