package h1client

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkRoundTrip compares a small POST and its answer over loopback, 16 callers at once,
// through this transport and through net/http's (HTTP/1.1 over plain TCP, HTTP/2 over TLS as
// net/http negotiates it with a server that offers it).
func BenchmarkRoundTrip(b *testing.B) {
	answer := strings.Repeat("a", 300)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, answer)
	})
	plain := httptest.NewServer(h)
	defer plain.Close()
	secure := httptest.NewUnstartedServer(h)
	secure.EnableHTTP2 = true
	secure.StartTLS()
	defer secure.Close()
	roots := secure.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	var h1 http.Protocols
	h1.SetHTTP1(true)
	for _, c := range []struct {
		name string
		url  string
		rt   http.RoundTripper
	}{
		{"h1client/http", plain.URL, New(Config{Fallback: failing{}})},
		{"net-http-h1/http", plain.URL, &http.Transport{Protocols: &h1, MaxConnsPerHost: 64, MaxIdleConnsPerHost: 64}},
		{"h1client/https", secure.URL, New(Config{Fallback: failing{}, TLS: &tls.Config{RootCAs: roots}})},
		{"net-http-h2/https", secure.URL, &http.Transport{ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 64, TLSClientConfig: &tls.Config{RootCAs: roots}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			body := strings.Repeat("q", 400)
			b.SetParallelism(8) // 16 callers on 2 CPUs
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, c.url, opaque(body))
					req.ContentLength = int64(len(body))
					resp, err := c.rt.RoundTrip(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
			})
		})
	}
}
