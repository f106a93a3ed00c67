package store_test

import (
	"context"
	"io"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

// Every SQL statement and Redis command gets a span carrying the job_id from the baggage.
func TestSpansForSQLAndRedis(t *testing.T) {
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	tel, err := telemetry.New(ctx, telemetry.Config{ServiceName: "approval-test", LogWriter: io.Discard, SpanProcessors: []sdktrace.SpanProcessor{rec}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(ctx) })

	pg := testinfra.Postgres(t)
	s, err := store.OpenPostgres(ctx, pg.DSN, store.WithTracing(tel.TracerProvider), store.WithKeyring(testKeys))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rdb := testinfra.Redis(t)
	kv := store.NewRedisClient(store.RedisOptions{Addr: rdb.Addr, TracerProvider: tel.TracerProvider})
	defer kv.Close()

	jctx := jobid.WithJobID(ctx, "job_20260301_001")
	_, _ = s.Get(jctx, "job_20260301_001")
	_, _ = store.NewRedisGrants(kv, rdb.Prefix, []byte("test-grant-seal-key"), nil).Get(jctx)

	seen := map[string]bool{}
	for _, sp := range rec.Ended() {
		for _, a := range sp.Attributes() {
			if a.Key == jobid.BaggageKey && a.Value.AsString() == "job_20260301_001" {
				seen[sp.Name()] = true
			}
		}
	}
	if !seen["sql SELECT"] || !seen["redis GET"] {
		t.Errorf("spans with job_id: %v", seen)
	}
}
