package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// step is one scripted answer of a fake provider.
type step struct {
	status int
	header map[string]string
	body   string
	// delay holds the answer back (until the client gives up, if longer than its timeout).
	delay time.Duration
}

type recorded struct {
	method string
	path   string
	header http.Header
	body   map[string]any
	raw    string
}

// fakeProvider serves the scripted steps in order (the last one repeats) and records every
// request it receives.
type fakeProvider struct {
	t     *testing.T
	mu    sync.Mutex
	steps []step
	reqs  []recorded
	srv   *httptest.Server
}

func newFake(t *testing.T, steps ...step) *fakeProvider {
	t.Helper()
	f := &fakeProvider{t: t, steps: steps}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProvider) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := recorded{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), raw: string(raw)}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &rec.body)
	}
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, rec)
	st := f.steps[min(n, len(f.steps)-1)]
	f.mu.Unlock()
	if st.delay > 0 {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(st.delay):
		}
	}
	for k, v := range st.header {
		w.Header().Set(k, v)
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(st.status)
	_, _ = io.WriteString(w, st.body)
}

func (f *fakeProvider) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// sleeps records the waits between attempts instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func routeByPath(m map[string]*fakeProvider) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := m[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		f.serve(w, r)
	})
}
