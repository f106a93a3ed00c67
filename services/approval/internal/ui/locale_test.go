package ui_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/ui"
)

// TestEveryText says the console server's own texts in Japanese and English; a code added to
// Texts must be added here.
func TestEveryText(t *testing.T) {
	if err := ui.Texts.Check(); err != nil {
		t.Fatal(err)
	}
	if err := ui.Texts.CheckLanguages(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		code   string
		args   []string
		ja, en string
	}{
		{ui.TextNotFoundTitle, nil, "ページが見つかりません", "Page not found"},
		{ui.TextNotFound, nil, "このページはこの承認コンソールにはありません。", "This page is not part of the approval console."},
		{ui.TextBack, nil, "承認コンソールへ戻る", "Back to the approval console"},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		seen[tc.code] = true
		if ja, en := ui.Texts.Text("ja", tc.code, tc.args...), ui.Texts.Text("en", tc.code, tc.args...); ja != tc.ja || en != tc.en {
			t.Errorf("%s: %q / %q, want %q / %q", tc.code, ja, en, tc.ja, tc.en)
		}
	}
	ui.Texts.ReportUncovered(t.Errorf, func(code string) bool { return seen[code] })
}

// TestErrorPageInTheReadersLanguage: a path under the console that holds nothing is a 404 page
// in Japanese by default, in English by ?locale=en, the console's choice (its cookie) or
// Accept-Language; the path is not shown.
func TestErrorPageInTheReadersLanguage(t *testing.T) {
	ja := []string{`<html lang="ja">`, "ページが見つかりません", "はこの承認コンソールにはありません。", "承認コンソールへ戻る"}
	en := []string{`<html lang="en">`, "Page not found", "is not part of the approval console.", "Back to the approval console"}
	for _, tc := range []struct {
		name, path, accept, cookie string
		want                       []string
	}{
		{"default", "/ui/nope.js", "", "", ja},
		{"?locale=en", "/ui/nope.js?locale=en", "", "", en},
		{"Accept-Language: en", "/ui/nope.js", "en-US,en;q=0.9", "", en},
		{"the console's choice", "/ui/nope.js", "", "en", en},
		{"the console's choice over Accept-Language", "/ui/nope.js", "en", "ja", ja},
		{"?locale= over the cookie", "/ui/nope.js?locale=ja", "", "en", ja},
		{"a nested path", "/ui/a/b/../c.css", "ja", "", ja},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			if tc.accept != "" {
				req.Header.Set("Accept-Language", tc.accept)
			}
			if tc.cookie != "" {
				req.AddCookie(&http.Cookie{Name: ui.LangCookie, Value: tc.cookie})
			}
			rec := httptest.NewRecorder()
			router().ServeHTTP(rec, req)
			body := rec.Body.String()
			if rec.Code != http.StatusNotFound || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
				t.Fatalf("%d %q", rec.Code, rec.Header().Get("Content-Type"))
			}
			if rec.Header().Get("Content-Security-Policy") == "" {
				t.Error("the error page has no CSP")
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q:\n%s", w, body)
				}
			}
			text := body[strings.Index(body, "<body>"):]
			if tc.want[0] == ja[0] {
				if w := fault.EnglishWords(strings.NewReplacer(req.URL.Path, "", "<body>", "", "</body>", "", "</html>", "", "<h1>", "",
					"</h1>", "", "<p>", "", "</p>", "", `<p id="error-message">`, "", `<a href="/ui/">`, "", "</a>", "").Replace(text)); len(w) > 0 {
					t.Errorf("English on the Japanese page: %q", w)
				}
			} else if fault.HasJapanese(body) {
				t.Errorf("Japanese on the English page:\n%s", body)
			}
		})
	}
	// What a path says does not reach the page, as markup or as text.
	rec := httptest.NewRecorder()
	router().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/%3Cscript%3Ealert(1)%3C%2Fscript%3E-call-0120", nil))
	if b := rec.Body.String(); rec.Code != http.StatusNotFound || strings.Contains(b, "script") || strings.Contains(b, "0120") {
		t.Errorf("path echoed: %d\n%s", rec.Code, b)
	}
}

// TestConsoleErrorsInItsLanguage: an error the API answers (a job that does not exist) is shown
// to the approver in the console's language — Japanese by default, English once switched — with
// the API's own words, not the browser's.
func TestConsoleErrorsInItsLanguage(t *testing.T) {
	s := startApproval(t, nil)
	ctx := browser(t)
	missing := jobID(909)
	var jaToast, enToast, jaLogin, enLogin string
	var switched bool
	err := chromedp.Do(ctx,
		login(s.base),
		chromedp.WaitVisible(chromedp.CSS("#list-view")),
		chromedp.Navigate(s.base+"/ui/#/jobs/"+missing),
		chromedp.WaitVisible(chromedp.CSS("#toast.bad")),
		into(&jaToast, chromedp.Text(chromedp.CSS("#toast"))),
		chromedp.Click(chromedp.CSS("#lang-btn")),
		// Switching the language shows the page again: the same error, now in English.
		into(&switched, chromedp.Poll[bool](`document.querySelector('#toast').textContent.startsWith('Error:')`)),
		into(&enToast, chromedp.Text(chromedp.CSS("#toast"))),
		// The login form's refusal follows the choice too.
		chromedp.Click(chromedp.CSS("#logout-btn")),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), "not-an-approver-token-000"),
		chromedp.Click(chromedp.CSS("#login-btn")),
		chromedp.WaitVisible(chromedp.CSS("#login-error")),
		into(&enLogin, chromedp.Text(chromedp.CSS("#login-error"))),
		chromedp.Click(chromedp.CSS("#lang-btn")),
		chromedp.Click(chromedp.CSS("#login-btn")),
		into(&switched, chromedp.Poll[bool](`document.querySelector("#login-error").textContent.startsWith("こ")`)),
		into(&jaLogin, chromedp.Text(chromedp.CSS("#login-error"))),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if want := "エラー：ジョブ " + missing + " は見つかりません"; jaToast != want {
		t.Errorf("Japanese toast = %q, want %q", jaToast, want)
	}
	if want := "Error: job " + missing + " not found"; enToast != want {
		t.Errorf("English toast = %q, want %q", enToast, want)
	}
	if enLogin != "This token does not belong to an approver." || jaLogin != "このトークンは承認者のものではありません。" {
		t.Errorf("login refusal = %q (en) / %q (ja)", enLogin, jaLogin)
	}
}
