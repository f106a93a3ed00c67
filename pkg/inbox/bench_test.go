//go:build !serveronly

package inbox_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
)

// benchEngine is an engine the benchmarks compare. open returns the engine for the stores, the
// engine for the consumer, the stream prefix, and a function that adds to b's results what
// happened on the engine since open (or since it was last called): on Redis the consumer's
// round trips and commands, on SQLite the commits.
type benchEngine struct {
	name string
	open func(b *testing.B) (store, consumer inbox.Engine, prefix string, report func(b *testing.B))
}

// benchEngines are SQLite at both durability levels, and Redis (the test's server) where the
// build has it (bench_redis_test.go).
var benchEngines = []benchEngine{
	{"sqlite", func(b *testing.B) (inbox.Engine, inbox.Engine, string, func(b *testing.B)) {
		e := benchSQLite(b, sqlstate.SyncNormal)
		return e, e, "", commitCounter(b)
	}},
	{"sqlite-full", func(b *testing.B) (inbox.Engine, inbox.Engine, string, func(b *testing.B)) {
		e := benchSQLite(b, sqlstate.SyncFull)
		return e, e, "", commitCounter(b)
	}},
}

func benchSQLite(b *testing.B, sync sqlstate.Sync) inbox.Engine {
	countCommits()
	db := openState(b, filepath.Join(b.TempDir(), "state.db"), sqlstate.Options{Sync: sync})
	b.Cleanup(func() { _ = db.Close() })
	return sqliteEngine(b, db)
}

// commits counts the write transactions committed on every SQLite connection opened after
// countCommits (SQLite's commit hook).
var (
	commits     atomic.Int64
	commitsOnce sync.Once
)

// commitCounter reports the commits per op since it was made or last called (a nil b only
// starts counting again).
func commitCounter(*testing.B) func(b *testing.B) {
	from := commits.Load()
	return func(b *testing.B) {
		n := commits.Load() - from
		from += n
		if b != nil && n > 0 {
			b.ReportMetric(float64(n)/float64(b.N), "commits/op")
		}
	}
}

func countCommits() {
	commitsOnce.Do(func() {
		sqlite.RegisterConnectionHook(func(conn sqlite.ExecQuerierContext, _ string) error {
			if h, ok := conn.(sqlite.HookRegisterer); ok {
				h.RegisterCommitHook(func() int32 {
					commits.Add(1)
					return 0 // 0: go on with the commit
				})
			}
			return nil
		})
	})
}

// BenchmarkAppend: one webhook event (600 bytes) deduplicated and stored durably.
func BenchmarkAppend(b *testing.B) {
	for _, be := range benchEngines {
		b.Run(be.name, func(b *testing.B) {
			e, _, prefix, _ := be.open(b)
			s, err := inbox.NewStoreOn(e, inbox.Config{Stream: prefix + "inbox:bench", Seal: testSeal})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			payload := make([]byte, 600)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := s.Append(ctx, inbox.Event{ID: fmt.Sprint("ev", i), Key: "chat", Payload: payload}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendConsumeAck is the consumer's hot path (read → turn → handle → ack): events
// appended while a consumer (8 chats at a time) handles and acknowledges them. An op is one
// event through the whole path; the time runs until the last one is acknowledged. Shapes:
// "spread", one event per webhook over 16 chats; "burst", webhooks of 16 events of one chat
// (a chat's run of messages), 4 chats taking turns. On Redis the consumer's round trips and
// commands per event are reported (the store's own append is one script call per event and
// not counted), on SQLite the commits per event (append, delivery and ack together).
func BenchmarkAppendConsumeAck(b *testing.B) {
	shapes := []struct {
		name         string
		chats, burst int
	}{{"spread", 16, 1}, {"burst", 4, 16}}
	for _, be := range benchEngines {
		for _, shape := range shapes {
			b.Run(be.name+"/"+shape.name, func(b *testing.B) {
				se, ce, prefix, report := be.open(b)
				cfg := inbox.Config{Stream: prefix + "inbox:bench", Group: "g", Seal: testSeal}
				s, err := inbox.NewStoreOn(se, cfg)
				if err != nil {
					b.Fatal(err)
				}
				var handled atomic.Int64
				ccfg := fastConsumer("bench")
				// Keep-alives and reclaims are periodic, not per event: out of the way here.
				ccfg.Block, ccfg.ClaimIdle = time.Second, time.Hour
				runConsumer(b, ce, cfg, ccfg, func(context.Context, inbox.Delivery) error {
					handled.Add(1)
					return nil
				})
				ctx := context.Background()
				payload := make([]byte, 600)
				// The consumer's start (the group, its own pending entries, the first reclaim) is not an op.
				waitFor(b, "the group", func() bool { return stats(b, s).Group })
				time.Sleep(50 * time.Millisecond)
				report(nil)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; {
					chat := fmt.Sprint("chat-", (i/shape.burst)%shape.chats)
					events := make([]inbox.Event, 0, shape.burst)
					for ; len(events) < shape.burst && i < b.N; i++ {
						events = append(events, inbox.Event{ID: fmt.Sprint("ev", i), Key: chat, Payload: payload})
					}
					if _, err := s.Append(ctx, events...); err != nil {
						b.Fatal(err)
					}
				}
				for {
					st := stats(b, s)
					if handled.Load() == int64(b.N) && st.Group && st.Pending == 0 && st.Lag == 0 {
						break
					}
					time.Sleep(time.Millisecond)
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
				report(b)
			})
		}
	}
}
