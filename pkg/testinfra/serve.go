package testinfra

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Listen opens a listener on a free loopback port for a service the test runs in-process; it
// is closed when the test ends if the service has not closed it.
func Listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testinfra: listen: %v", err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

// ServeConns listens on a free loopback port until the test ends and serves each connection
// accepted with serve on a goroutine of its own, closing the connection when serve returns. It
// returns the listener's host:port. For servers a test writes by hand (a protocol spoken wrong on
// purpose).
func ServeConns(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln := Listen(t)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// URL is the http:// address of ln.
func URL(ln net.Listener) string { return "http://" + ln.Addr().String() }

// Serve runs a service in-process — run is its Run with the test's Config — and waits until
// probe (its /readyz, or /healthz where readiness needs peers the test does not run) answers
// 200 OK. It fails the test when run returns before the service is ready.
// stop (called when the test ends, or earlier by the test) cancels run's context and waits for
// it: run must return nil within 30 s.
//
// A test that keeps an HTTP client of its own for the service registers its
// CloseIdleConnections with t.Cleanup after Serve, so it runs first and the graceful shutdown
// does not wait for those idle connections.
func Serve(t testing.TB, name, probe string, run func(ctx context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		runErr = run(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
				if runErr != nil {
					t.Errorf("%s: Run: %v", name, runErr)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("%s did not stop within 30 s", name)
			}
		})
	}
	t.Cleanup(stop)
	waitReady(t, name, probe, 20*time.Second, func() (bool, error) {
		select {
		case <-done:
			return true, runErr
		default:
			return false, nil
		}
	})
	return stop
}

// WaitReady waits up to within until base/readyz answers 200 OK, for a service the test
// started as a process.
func WaitReady(t testing.TB, base string, within time.Duration) {
	t.Helper()
	waitReady(t, base, base+"/readyz", within, func() (bool, error) { return false, nil })
}

// waitReady polls probe; it fails the test when within passes first or when stopped
// reports that the service has stopped.
func waitReady(t testing.TB, name, probe string, within time.Duration, stopped func() (bool, error)) {
	t.Helper()
	// Without keep-alive the probe leaves no connection behind to delay the shutdown.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	deadline := time.Now().Add(within)
	for {
		if gone, err := stopped(); gone {
			t.Fatalf("%s stopped before it was ready: %v", name, err)
		}
		err := ready(hc, probe)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %v: %v", name, within, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
func ready(hc *http.Client, url string) error {
	res, err := hc.Get(url)
	if err != nil {
		return err
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, res.Status)
	}
	return nil
}

// H2CServer serves h over HTTP/1.1 and unencrypted HTTP/2 (h2c), as the suite's Connect
// clients speak it, until the test ends.
func H2CServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = &p
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}
