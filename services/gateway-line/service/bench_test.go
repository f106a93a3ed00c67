package service_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"

	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid/redisalloc"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/httpapi"
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
	channeltest.PostAtRate(b, rate, func(i int) []byte {
		return fakeline.Body(fakeline.TextEvent(fmt.Sprintf("01BENCH%08d", i), allowed, "", "", "ベンチマーク", nowMillis(), false))
	}, func(client *http.Client, body []byte) (int, error) {
		res, err := fakeline.Post(client, h.URL+service.WebhookPath, testSecret, body)
		if err != nil {
			return 0, err
		}
		res.Body.Close()
		return res.StatusCode, nil
	})
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
	handler := httpapi.NewWebhook(testSecret, channel.NewIngester("line", store, jobs, slog.New(slog.DiscardHandler), tracenoop.NewTracerProvider(),
		service.Name, telemetry.Propagator()), slog.New(slog.DiscardHandler))
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = fakeline.Body(fakeline.TextEvent(fmt.Sprintf("01HBENCH%08d", i), allowed, "", "", "ベンチ", nowMillis(), false))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		req := httptest.NewRequest(http.MethodPost, service.WebhookPath, bytes.NewReader(bodies[i]))
		req.Header.Set("X-Line-Signature", fakeline.Sign(testSecret, bodies[i]))
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
