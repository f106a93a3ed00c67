//go:build !serveronly

package inbox_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// benchEngines are the engines the benchmarks compare: Redis (the test's server) and SQLite
// at both durability levels.
var benchEngines = []struct {
	name string
	open func(b *testing.B) (inbox.Engine, string)
}{
	{"redis", func(b *testing.B) (inbox.Engine, string) {
		r := testinfra.Redis(b)
		return inbox.RedisEngine(r.Client), r.Prefix
	}},
	{"sqlite", func(b *testing.B) (inbox.Engine, string) { return benchSQLite(b, sqlstate.SyncNormal), "" }},
	{"sqlite-full", func(b *testing.B) (inbox.Engine, string) { return benchSQLite(b, sqlstate.SyncFull), "" }},
}

func benchSQLite(b *testing.B, sync sqlstate.Sync) inbox.Engine {
	db := openState(b, filepath.Join(b.TempDir(), "state.db"), sqlstate.Options{Sync: sync})
	b.Cleanup(func() { _ = db.Close() })
	return sqliteEngine(b, db)
}

// BenchmarkAppend: one webhook event (600 bytes) deduplicated and stored durably.
func BenchmarkAppend(b *testing.B) {
	for _, be := range benchEngines {
		b.Run(be.name, func(b *testing.B) {
			e, prefix := be.open(b)
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

// BenchmarkAppendConsumeAck: events of 16 chats appended one by one while a consumer (8 chats
// at a time) handles and acknowledges them; an op is one event through the whole path, the
// time runs until the last one is acknowledged.
func BenchmarkAppendConsumeAck(b *testing.B) {
	for _, be := range benchEngines {
		b.Run(be.name, func(b *testing.B) {
			e, prefix := be.open(b)
			cfg := inbox.Config{Stream: prefix + "inbox:bench", Group: "g", Seal: testSeal}
			s, err := inbox.NewStoreOn(e, cfg)
			if err != nil {
				b.Fatal(err)
			}
			var handled atomic.Int64
			ccfg := fastConsumer("bench")
			ccfg.Block = time.Second
			runConsumer(b, e, cfg, ccfg, func(context.Context, inbox.Delivery) error {
				handled.Add(1)
				return nil
			})
			ctx := context.Background()
			payload := make([]byte, 600)
			b.ResetTimer()
			for i := range b.N {
				if _, err := s.Append(ctx, inbox.Event{ID: fmt.Sprint("ev", i), Key: fmt.Sprint("chat-", i%16), Payload: payload}); err != nil {
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
		})
	}
}
