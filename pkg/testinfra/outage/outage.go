// Package outage is the outage switch of the outside-API fakes (fakeline, fakeslack): a plan
// of faults for the next requests, after which the API recovers, and the dropped connection
// that stands for a network error.
package outage

import (
	"net/http"
	"sync"
)

// Plan fails the next requests with faults of type F, cycling through them. The zero Plan is
// up. It is safe for concurrent use.
type Plan[F any] struct {
	mu     sync.Mutex
	faults []F
	left   int
	count  int
	failed int
}

// Start makes the next n requests fail, cycling through faults, then the API recovers; n < 0
// keeps it down until Up.
func (p *Plan[F]) Start(n int, faults ...F) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults, p.left, p.count = faults, n, 0
}

// Up ends the outage.
func (p *Plan[F]) Up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults, p.left = nil, 0
}

// Failed is the number of requests the outages failed.
func (p *Plan[F]) Failed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// Next is the fault for the request now, if the API is down.
func (p *Plan[F]) Next() (F, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var f F
	if len(p.faults) == 0 || p.left == 0 {
		return f, false
	}
	f = p.faults[p.count%len(p.faults)]
	p.count++
	p.failed++
	if p.left > 0 {
		p.left--
	}
	return f, true
}

// Drop closes the request's connection without an answer (a network error to the client); false
// when the connection cannot be taken over.
func Drop(w http.ResponseWriter) bool {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return false
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}
