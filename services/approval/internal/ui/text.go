package ui

import (
	"html"
	"io"
	"net/http"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
)

// Texts are the words of the pages the console's server says itself (the console's own texts
// live in static/app.js), by code, in Japanese and English.
var Texts = fault.Catalog{
	TextNotFoundTitle: {"ページが見つかりません", "Page not found"},
	TextNotFound:      {"このページはこの承認コンソールにはありません。", "This page is not part of the approval console."},
	TextBack:          {"承認コンソールへ戻る", "Back to the approval console"},
}

// The codes of Texts.
const (
	TextNotFoundTitle = "PAGE_NOT_FOUND_TITLE"
	TextNotFound      = "PAGE_NOT_FOUND"
	TextBack          = "BACK_TO_CONSOLE"
)

// LangCookie holds the language chosen in the console (static/app.js sets it).
const LangCookie = "picoclaw_lang"

// Locale is the language of a page the server answers with: ?locale=, else the console's
// choice (LangCookie), else Accept-Language, else Japanese.
func Locale(r *http.Request) string {
	if l := r.URL.Query().Get("locale"); l == "ja" || l == "en" {
		return l
	}
	if c, err := r.Cookie(LangCookie); err == nil && (c.Value == "ja" || c.Value == "en") {
		return c.Value
	}
	return rpcserver.RequestLocale(r)
}

// errorPage is the page of an error the server answers itself, every value escaped. Built
// without html/template: its reflection keeps every exported method of every type in the binary
// (several MB of the embedded suite).
func errorPage(lang, title, message, back, backText string) string {
	e := html.EscapeString
	return `<!doctype html>
<html lang="` + e(lang) + `">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>` + e(title) + ` — PicoClaw</title>
</head>
<body>
<h1>` + e(title) + `</h1>
<p id="error-message">` + e(message) + `</p>
<p><a href="` + e(back) + `">` + e(backText) + `</a></p>
</body>
</html>
`
}

// notFound answers a path under the console that holds nothing with a page in the reader's
// language. The path is not shown: a crafted link could make the console's own page say what
// it likes.
func notFound(w http.ResponseWriter, r *http.Request) {
	l := Locale(r)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	_, _ = io.WriteString(w, errorPage(l, Texts.Text(l, TextNotFoundTitle), Texts.Text(l, TextNotFound), Prefix, Texts.Text(l, TextBack)))
}
