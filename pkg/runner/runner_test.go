package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/idlemem"
)

func TestMainExitCodes(t *testing.T) {
	var stderr bytes.Buffer
	ok := func(context.Context, string, []string) error { return nil }
	if code := Main("svc", nil, &stderr, ok); code != 0 {
		t.Fatalf("clean run exit %d", code)
	}
	fail := func(context.Context, string, []string) error { return errors.New("boom") }
	if code := Main("svc", nil, &stderr, fail); code != 1 || !strings.Contains(stderr.String(), "svc: boom") {
		t.Fatalf("failing run exit %d, stderr %q", code, stderr.String())
	}
	if code := Main("svc", []string{"-nope"}, &stderr, ok); code != 2 {
		t.Fatalf("bad flag exit %d", code)
	}
	var gotPath string
	var gotArgs []string
	Main("svc", []string{"-config", "c.yaml", "migrate"}, &stderr, func(_ context.Context, p string, a []string) error {
		gotPath, gotArgs = p, a
		return nil
	})
	if gotPath != "c.yaml" || len(gotArgs) != 1 || gotArgs[0] != "migrate" {
		t.Fatalf("path %q args %v", gotPath, gotArgs)
	}
}

// A service runs with the collector target the services share unless the operator set GOGC.
func TestMainSetsTheServicesGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	t.Setenv("GOGC", "") // restored after the test
	os.Unsetenv("GOGC")
	var during int
	Main("svc", nil, io.Discard, func(context.Context, string, []string) error {
		during = debug.SetGCPercent(-1)
		debug.SetGCPercent(during)
		return nil
	})
	if during != idlemem.ServiceGCPercent {
		t.Fatalf("GC percent %d while the service ran, want %d", during, idlemem.ServiceGCPercent)
	}
}

func TestHealthcheck(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer up.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	defer down.Close()
	never := func(context.Context, string, []string) error { t.Fatal("service ran"); return nil }
	var stderr bytes.Buffer
	if code := Main("svc", []string{"healthcheck", up.URL}, &stderr, never); code != 0 {
		t.Fatalf("healthy exit %d: %s", code, stderr.String())
	}
	if code := Main("svc", []string{"healthcheck", down.URL}, &stderr, never); code != 1 {
		t.Fatalf("unhealthy exit %d", code)
	}
}

func TestEveryRunsUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Millisecond, func() {
			calls++
			if calls == 3 {
				cancel()
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not stop when its context ended")
	}
	if calls != 3 {
		t.Fatalf("calls = %d, want 3", calls)
	}
}
