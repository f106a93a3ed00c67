// Package outbound is the HTTP client for the APIs outside the suite (LINE, Slack, the model
// providers): the standard transport with a connection pool sized for concurrent calls to one
// host, so a burst reuses its connections instead of opening (and leaving in TIME_WAIT) one per
// call — the default keeps only two idle connections per host.
package outbound

import (
	"net/http"
	"time"
)

// IdlePerHost is how many idle connections to one host are kept for reuse.
const IdlePerHost = 64

// Client returns a client whose whole request is bounded by timeout (0: no bound; the caller's
// context decides).
func Client(timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 4 * IdlePerHost
	t.MaxIdleConnsPerHost = IdlePerHost
	// An idle connection (its TLS state and buffers, two goroutines) is closed after 30 s: a
	// burst reuses the pool, a quiet suite holds none of it a minute later.
	t.IdleConnTimeout = 30 * time.Second
	return &http.Client{Transport: t, Timeout: timeout}
}
