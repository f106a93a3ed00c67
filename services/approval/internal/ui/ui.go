// Package ui serves the approval web console at /ui/: static HTML, CSS and JavaScript embedded
// in the binary (no build step) that talk to the REST API with the approver's bearer token.
package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var static embed.FS

// Prefix is where the console is mounted.
const Prefix = "/ui/"

// securityHeaders keep LLM-provided text inert even if it reached markup: scripts and styles
// only from the console itself, no inline script, no framing, no referrer with job ids.
var securityHeaders = [][2]string{
	{"Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
	{"X-Content-Type-Options", "nosniff"},
	{"X-Frame-Options", "DENY"},
	{"Referrer-Policy", "no-referrer"},
	{"Cache-Control", "no-cache"},
}

// Handler serves the console; it expects the full request path (it strips Prefix itself).
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		// The embedded tree always has the directory; serve nothing rather than panic.
		return http.NotFoundHandler()
	}
	files := http.StripPrefix(Prefix[:len(Prefix)-1], http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, h := range securityHeaders {
			w.Header().Set(h[0], h[1])
		}
		// A path that names no file gets the console's own page, in the reader's language.
		name := path.Clean("/" + strings.TrimPrefix(r.URL.Path, Prefix[:len(Prefix)-1]))
		if _, err := fs.Stat(sub, strings.TrimPrefix(name, "/")); name != "/" && err != nil {
			notFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
}

// Register mounts the console through handle (rpcserver.Server.HandleHTTP traces and counts it).
// It registers Prefix itself as well as the assets below it, so when it is called after another
// handler of Prefix, this console takes the path.
func Register(handle func(method, pattern string, h http.Handler)) {
	h := Handler()
	handle(http.MethodGet, Prefix, h)
	handle(http.MethodGet, Prefix+"*", h)
	handle(http.MethodGet, Prefix[:len(Prefix)-1], http.RedirectHandler(Prefix, http.StatusMovedPermanently))
}
