package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/store"
)

// One beat end to end in the use case with the real Redis store (one WATCH/GET/MULTI round).
func BenchmarkBeatRedis(b *testing.B) {
	rdb := testinfra.Redis(b)
	svc := app.New(app.Config{Timeout: time.Minute}, store.NewRedis(rdb.Client, rdb.Prefix), app.NewBroker(), nil)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("agent-%d", i%13)
		i++
		if err := svc.Beat(ctx, domain.Beat{AgentID: id, Alias: id, Kind: "service", Status: domain.StateIdle, MemoryMB: 12}); err != nil {
			b.Fatal(err)
		}
	}
}

// The report of a full suite (13 agents): sweep, list and text.
func BenchmarkReportRedis(b *testing.B) {
	rdb := testinfra.Redis(b)
	svc := app.New(app.Config{Timeout: time.Minute}, store.NewRedis(rdb.Client, rdb.Prefix), app.NewBroker(), nil)
	ctx := context.Background()
	for i := range 13 {
		id := fmt.Sprintf("agent-%d", i)
		if err := svc.Beat(ctx, domain.Beat{AgentID: id, Alias: id, Kind: "service", Status: domain.StateIdle}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if r, err := svc.Report(ctx, app.LocaleJa); err != nil || len(r.Agents) != 13 {
			b.Fatal(err)
		}
	}
}
