package service_test

import (
	"bytes"
	"fmt"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid/redisalloc"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/httpapi"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/linetest"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

// BenchmarkWebhookAtRate sends signed one-event webhooks to the running gateway at a fixed
// 500 requests/s (open loop: a request is not held back by the previous one) and reports the
// latency percentiles of the webhook path: signature check, parse, dedupe, persist, 200. The
// consumer answers every event meanwhile, as in production.
//
//	go test -run '^$' -bench WebhookAtRate -benchtime 5000x ./services/gateway-line/service/
func BenchmarkWebhookAtRate(b *testing.B) {
	const rate = 500
	h := start(b, func(c *service.Config) { c.LogLevel = "warn" })
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = linetest.Body(linetest.TextEvent(fmt.Sprintf("01BENCH%08d", i), allowed, "", "",
			"ベンチマーク", nowMillis(), false))
	}
	lat := make([]time.Duration, b.N)
	var failed sync.Map
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	b.ResetTimer()
	for i := range b.N {
		<-tick.C
		wg.Go(func() {
			t0 := time.Now()
			res, err := linetest.Post(client, h.url+service.WebhookPath, testSecret, bodies[i])
			lat[i] = time.Since(t0)
			if err != nil {
				failed.Store(i, err.Error())
				return
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				failed.Store(i, res.Status)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	failed.Range(func(k, v any) bool {
		b.Fatalf("request %v: %v", k, v)
		return false
	})
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max_ms")
}

// BenchmarkWebhookHandler measures the webhook handler alone (no network): signature check,
// parse, dedupe and persist to Redis.
func BenchmarkWebhookHandler(b *testing.B) {
	r := testinfra.Redis(b)
	store, err := inbox.NewStore(r.Client, inbox.Config{Stream: r.Prefix + "inbox:line", Seal: testinfra.Credentials(b, svcauth.GatewayLine).DeriveKey("inbox")})
	if err != nil {
		b.Fatal(err)
	}
	jobs := redisalloc.New(r.Client, time.UTC, r.Prefix)
	handler := httpapi.NewWebhook(testSecret, store, jobs, slog.New(slog.DiscardHandler), tracenoop.NewTracerProvider(), telemetry.Propagator())
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = linetest.Body(linetest.TextEvent(fmt.Sprintf("01HBENCH%08d", i), allowed, "", "", "ベンチ", nowMillis(), false))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		req := httptest.NewRequest(http.MethodPost, service.WebhookPath, bytes.NewReader(bodies[i]))
		req.Header.Set("X-Line-Signature", linetest.Sign(testSecret, bodies[i]))
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
