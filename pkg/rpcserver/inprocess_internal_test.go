package rpcserver

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/http/httpguts"
)

// An in-process request reaches the handler as a server parses it from the wire: what the
// network client refuses to send is refused, keys are canonical.
func TestInProcessHeaderAsOnTheWire(t *testing.T) {
	for _, bad := range []http.Header{
		{"X-Smuggle": {"a\r\nX-Caller: approval"}},
		{"X-Nul": {"a\x00b"}},
		{"Bad Name": {"v"}},
		{"X-Colon:": {"v"}},
		{"": {"v"}},
	} {
		if _, err := wireHeader(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	h, err := wireHeader(http.Header{"x-job-id": {"1"}, "X-Job-Id": {"2"}, "content-type": {"application/proto"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Values("X-Job-Id"); len(got) != 2 {
		t.Errorf("X-Job-Id = %q, want both values", got)
	}
	if _, raw := h["x-job-id"]; raw {
		t.Error("a non-canonical key reached the handler")
	}
	if h.Get("Content-Type") != "application/proto" {
		t.Errorf("Content-Type = %q", h.Get("Content-Type"))
	}
}

// The handler gets a copy of the caller's header, canonical, whatever its form: what it sets
// never reaches the caller.
func TestInProcessHeaderIsTheHandlersOwn(t *testing.T) {
	for _, h := range []http.Header{
		{"Content-Type": {"application/proto"}, "X-Job-Id": {"1"}},
		{"content-type": {"application/proto"}},
	} {
		before := h.Clone()
		got, err := wireHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		got.Set("X-Seen", "1")
		got["Content-Type"][0] = "changed"
		if !reflect.DeepEqual(h, before) {
			t.Errorf("the handler's header reached the caller's: %q, was %q", h, before)
		}
	}
	if got, err := wireHeader(nil); err != nil || got == nil {
		t.Errorf("no header: %v, %v; want an empty one a handler can set", got, err)
	}
}

// A request with a header the network client would refuse is not served in process either.
func TestInProcessRefusesAnInvalidHeader(t *testing.T) {
	served := false
	e := &inProcessHandler{h: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }), base: context.Background(), calls: &inflight{}}
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/x.v1.S/M", strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/proto")
	req.Header["X-Smuggle"] = []string{"a\r\nb"}
	if _, err := e.serve(req); err == nil || served {
		t.Fatalf("served = %v, err = %v", served, err)
	}
	req.Header.Del("X-Smuggle")
	req.Host = "bad host\r\n"
	if _, err := e.serve(req); err == nil || served {
		t.Fatalf("bad Host: served = %v, err = %v", served, err)
	}
}

// A call counts itself in flight before it looks whether the service still serves in process,
// so the service's drain, which waits for the count after closing, never misses it; after the
// stop a call is not counted and goes to the network.
func TestInProcessCallIsCountedBeforeTheClosedCheck(t *testing.T) {
	f := &inflight{}
	e := &inProcessHandler{calls: f}
	if !e.enter() {
		t.Fatal("an open service refused a call")
	}
	if f.n.Load() != 1 {
		t.Fatalf("in flight = %d, want 1", f.n.Load())
	}
	e.closed.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if f.wait(ctx) {
		t.Fatal("the drain did not wait for the call that entered before the stop")
	}
	f.done()
	if e.enter() {
		t.Fatal("a stopped service took a call")
	}
	if f.n.Load() != 0 || !f.wait(context.Background()) {
		t.Fatalf("in flight = %d after a refused call", f.n.Load())
	}
}

// The field checks agree with net/http's own (httpguts, which the network client applies).
func TestInProcessHeaderChecksAgreeWithNetHTTP(t *testing.T) {
	for c := 0; c < 256; c++ {
		s := string([]byte{'a', byte(c), 'b'})
		if got, want := validHeaderName(s), httpguts.ValidHeaderFieldName(s); got != want {
			t.Errorf("name with byte %#x: %v, net/http says %v", c, got, want)
		}
		if got, want := validHeaderValue(s), httpguts.ValidHeaderFieldValue(s); got != want {
			t.Errorf("value with byte %#x: %v, net/http says %v", c, got, want)
		}
	}
}
