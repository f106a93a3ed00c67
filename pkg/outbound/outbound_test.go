package outbound_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/picoclaw-suite/picoclaw/pkg/outbound"
)

// A burst of concurrent calls to one host reuses its connections: far fewer are opened than
// calls are made.
func TestBurstReusesConnections(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := outbound.Client(0)
	for range 10 {
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				res, err := c.Get(srv.URL)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			})
		}
		wg.Wait()
	}
	// A connection goes back to the pool just after its body is closed, so a few calls of the
	// next burst may dial before it is there; Go's default pool (2 idle per host) opens about 140.
	if n := conns.Load(); n > 32 {
		t.Fatalf("%d connections for 160 calls in bursts of 16", n)
	}
}

// An outbound call whose address carries a key in its query leaves no key on its span.
func TestTracedCallsCarryNoQuerySecrets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	res, err := outbound.Client(5*time.Second, outbound.Traced(tp)).Get(srv.URL + "/v1/models?key=sk-secret-123&alt=json")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("spans = %d", len(spans))
	}
	found := false
	for _, kv := range spans[0].Attributes() {
		if strings.Contains(kv.Value.Emit(), "sk-secret-123") {
			t.Fatalf("%s = %s", kv.Key, kv.Value.Emit())
		}
		found = found || (kv.Key == "url.full" && strings.Contains(kv.Value.AsString(), "key=REDACTED"))
	}
	if !found {
		t.Fatalf("no masked url.full: %v", spans[0].Attributes())
	}
}

// A client's timeout bounds a request up to the end of its answer's body: a server slow to
// answer, or slow to finish the body it started, fails the call; a body read to its end and never
// closed (as an SDK does with an error answer) holds nothing until the timeout.
func TestTimeoutBoundsTheWholeAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow-head":
			time.Sleep(300 * time.Millisecond)
		case "/slow-body":
			_, _ = io.WriteString(w, "start")
			w.(http.Flusher).Flush()
			time.Sleep(300 * time.Millisecond)
		default:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"message":"bad"}`)
		}
	}))
	defer srv.Close()
	c := outbound.Client(100 * time.Millisecond)
	if _, err := c.Get(srv.URL + "/slow-head"); err == nil {
		t.Fatal("an answer slower than the timeout arrived")
	}
	res, err := c.Get(srv.URL + "/slow-body")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(res.Body); err == nil {
		t.Fatal("a body slower than the timeout was read whole")
	}
	_ = res.Body.Close()

	before := runtime.NumGoroutine()
	for range 200 {
		res, err := c.Get(srv.URL + "/error")
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(res.Body); err != nil || res.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "bad") {
			t.Fatalf("%d %q %v", res.StatusCode, b, err)
		}
	}
	if after := runtime.NumGoroutine(); after > before+20 {
		t.Fatalf("%d goroutines after 200 answers read and not closed, %d before", after, before)
	}
}
