package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/store"
)

func TestRedisRoundTripAndList(t *testing.T) {
	rdb := testinfra.Redis(t)
	s := store.NewRedis(rdb.Client, rdb.Prefix)
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	want := domain.Agent{
		Last: domain.Beat{AgentID: "order2", Alias: "Ao", Service: "coder-order", Kind: "agent", SentAt: now.Add(-time.Millisecond),
			Status: domain.StateError, JobIDs: []string{"job_20260101_001", "job_20260101_002"}, MemoryMB: 41.5,
			LastTaskDurationMs: 1234, ErrorMessage: "openai: 429"},
		State: domain.StateError, LastSeen: now, StateSince: now.Add(-time.Second), IncidentSince: now.Add(-time.Second),
	}
	if err := s.Update(ctx, "order2", func(cur *domain.Agent) *domain.Agent {
		if cur != nil {
			t.Errorf("unknown agent loaded as %+v", cur)
		}
		return &want
	}); err != nil {
		t.Fatal(err)
	}
	// Returning nil writes nothing.
	if err := s.Update(ctx, "order1", func(*domain.Agent) *domain.Agent { return nil }); err != nil {
		t.Fatal(err)
	}
	var loaded domain.Agent
	if err := s.Update(ctx, "order2", func(cur *domain.Agent) *domain.Agent {
		loaded = *cur
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Fatalf("list = %+v, want one agent", list)
	}
	for _, got := range []domain.Agent{loaded, list[0]} {
		if got.Last.AgentID != want.Last.AgentID || got.State != want.State || !got.LastSeen.Equal(want.LastSeen) ||
			!got.IncidentSince.Equal(want.IncidentSince) || len(got.Last.JobIDs) != 2 || got.Last.ErrorMessage != "openai: 429" ||
			got.Last.MemoryMB != 41.5 || got.Last.LastTaskDurationMs != 1234 || got.Last.Kind != "agent" {
			t.Fatalf("got %+v\nwant %+v", got, want)
		}
	}
}

// Concurrent updates of one agent must not lose each other's writes.
func TestRedisUpdateIsAtomic(t *testing.T) {
	rdb := testinfra.Redis(t)
	s := store.NewRedis(rdb.Client, rdb.Prefix)
	ctx := context.Background()
	const workers, each = 4, 10
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := s.Update(ctx, "worker", func(cur *domain.Agent) *domain.Agent {
					next := domain.Agent{Last: domain.Beat{AgentID: "worker"}, State: domain.StateIdle}
					if cur != nil {
						next.Last.LastTaskDurationMs = cur.Last.LastTaskDurationMs + 1
					} else {
						next.Last.LastTaskDurationMs = 1
					}
					return &next
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Last.LastTaskDurationMs != workers*each {
		t.Fatalf("counter = %+v, want %d", list, workers*each)
	}
}
