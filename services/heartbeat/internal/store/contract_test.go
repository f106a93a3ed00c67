package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
)

// engine is one implementation under the contract, on state of its own.
type engine struct {
	store app.Store
	// reopen drops the store's connection and opens the same state again (a restart).
	reopen func(t *testing.T) app.Store
}

func contract(t *testing.T, newEngine func(t *testing.T) engine) {
	cases := []struct {
		name string
		run  func(t *testing.T, e engine)
	}{
		{"RoundTripAndList", roundTripAndList},
		{"UpdateIsAtomic", updateIsAtomic},
		{"SurvivesReopen", survivesReopen},
		{"ReplicasAreKeptApartAndDeleted", replicasAreKeptApartAndDeleted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newEngine(t)) })
	}
}

func list(t *testing.T, s app.Store) []domain.Agent {
	t.Helper()
	l, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func roundTripAndList(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	if l := list(t, s); len(l) != 0 {
		t.Fatalf("empty store lists %+v", l)
	}
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	want := domain.Agent{
		Last: domain.Beat{AgentID: "order2", Alias: "Ao", Service: "coder-order", Kind: "agent", SentAt: now.Add(-time.Millisecond),
			Status: domain.StateError, JobIDs: []string{"job_20260101_001", "job_20260101_002"}, MemoryMB: 41.5,
			LastTaskDurationMs: 1234, ErrorMessage: "openai gpt-4o HTTP 429", ErrorCode: "llm.rate_limited", Note: "retrying"},
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
	l := list(t, s)
	if len(l) != 1 {
		t.Fatalf("list = %+v, want one agent", l)
	}
	for _, got := range []domain.Agent{loaded, l[0]} {
		if got.Last.AgentID != want.Last.AgentID || got.Last.Alias != "Ao" || got.Last.Service != "coder-order" ||
			got.Last.Status != domain.StateError || !got.Last.SentAt.Equal(want.Last.SentAt) || got.State != want.State ||
			!got.LastSeen.Equal(want.LastSeen) || !got.StateSince.Equal(want.StateSince) || !got.IncidentSince.Equal(want.IncidentSince) ||
			len(got.Last.JobIDs) != 2 || got.Last.ErrorMessage != "openai gpt-4o HTTP 429" || got.Last.ErrorCode != "llm.rate_limited" || got.Last.Note != "retrying" ||
			got.Last.MemoryMB != 41.5 || got.Last.LastTaskDurationMs != 1234 || got.Last.Kind != "agent" {
			t.Fatalf("got %+v\nwant %+v", got, want)
		}
	}
	// A second agent is listed beside the first; an update replaces the whole picture.
	for _, id := range []string{"mio", "order2"} {
		if err := s.Update(ctx, id, func(*domain.Agent) *domain.Agent {
			return &domain.Agent{Last: domain.Beat{AgentID: id}, State: domain.StateIdle}
		}); err != nil {
			t.Fatal(err)
		}
	}
	l = list(t, s)
	ids := map[string]domain.State{}
	for _, a := range l {
		ids[a.Last.AgentID] = a.State
		if a.Last.ErrorMessage != "" {
			t.Errorf("%s kept an old field: %+v", a.Last.AgentID, a)
		}
	}
	if len(l) != 2 || ids["mio"] != domain.StateIdle || ids["order2"] != domain.StateIdle {
		t.Fatalf("list = %+v", l)
	}
}

// Concurrent updates of one agent must not lose each other's writes.
func updateIsAtomic(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	const workers, each = 6, 20
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				// Each worker also updates an agent of its own, so writes to others interleave.
				for _, id := range []string{"worker", fmt.Sprint("own-", w)} {
					err := s.Update(ctx, id, func(cur *domain.Agent) *domain.Agent {
						next := domain.Agent{Last: domain.Beat{AgentID: id}, State: domain.StateIdle}
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
			}
		})
	}
	wg.Wait()
	counts := map[string]int64{}
	for _, a := range list(t, s) {
		counts[a.Last.AgentID] = a.Last.LastTaskDurationMs
	}
	if len(counts) != workers+1 || counts["worker"] != workers*each {
		t.Fatalf("counters = %v, want worker at %d", counts, workers*each)
	}
	for w := range workers {
		if c := counts[fmt.Sprint("own-", w)]; c != each {
			t.Fatalf("own-%d at %d, want %d", w, c, each)
		}
	}
}

func survivesReopen(t *testing.T, e engine) {
	ctx := context.Background()
	if err := e.store.Update(ctx, "mio", func(*domain.Agent) *domain.Agent {
		return &domain.Agent{Last: domain.Beat{AgentID: "mio", Alias: "Mio"}, State: domain.StateBusy}
	}); err != nil {
		t.Fatal(err)
	}
	l := list(t, e.reopen(t))
	if len(l) != 1 || l[0].Last.Alias != "Mio" || l[0].State != domain.StateBusy {
		t.Fatalf("after reopening: %+v", l)
	}
}

// Two replicas of one agent are two entries; their replica and streak come back as stored, and
// Delete forgets one (returning it) while the other stays.
func replicasAreKeptApartAndDeleted(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	for i, r := range []string{"pod-a", "pod-b"} {
		a := domain.Agent{Last: domain.Beat{AgentID: "chat", Alias: "Mio", Service: "chat-mio", Kind: "agent", Status: domain.StateError, Replica: r},
			State: domain.StateError, LastSeen: now, StateSince: now, Streak: i + 2}
		if err := s.Update(ctx, a.Last.Key(), func(*domain.Agent) *domain.Agent { return &a }); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]int{}
	for _, a := range list(t, s) {
		got[a.Last.Key()] = a.Streak
	}
	if fmt.Sprint(got) != "map[chat@pod-a:2 chat@pod-b:3]" {
		t.Fatalf("stored = %v", got)
	}
	gone, err := s.Delete(ctx, "chat@pod-a")
	if err != nil || gone == nil || gone.Last.Replica != "pod-a" || gone.Streak != 2 {
		t.Fatalf("Delete = %+v, %v", gone, err)
	}
	if again, err := s.Delete(ctx, "chat@pod-a"); err != nil || again != nil {
		t.Fatalf("second Delete = %+v, %v", again, err)
	}
	if l := list(t, s); len(l) != 1 || l[0].Last.Key() != "chat@pod-b" {
		t.Fatalf("after Delete: %+v", l)
	}
}
