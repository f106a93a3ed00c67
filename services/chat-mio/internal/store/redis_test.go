package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

const sid = "slack:C1:1700000000.000100"

func newStore(t *testing.T) (*Redis, testinfra.RedisDB) {
	t.Helper()
	r := testinfra.Redis(t)
	return NewRedis(r.Client, r.Prefix, time.Hour), r
}

func TestLoadEmptySession(t *testing.T) {
	s, _ := newStore(t)
	got, err := s.Load(context.Background(), sid, "20260101", 10)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != sid || got.LocalOnly || got.PrevPrimaryRoute != "" || len(got.Pending) != 0 || len(got.Memory) != 0 || got.Degraded {
		t.Fatalf("empty session = %+v", got)
	}
}

func TestFlagsAndTTL(t *testing.T) {
	s, r := newStore(t)
	ctx := context.Background()
	if err := s.SetLocalOnly(ctx, sid, true); err != nil {
		t.Fatal(err)
	}
	if err := s.SetPrevRoute(ctx, sid, "PLAN"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, sid, "20260101", 10)
	if err != nil {
		t.Fatal(err)
	}
	if !got.LocalOnly || got.PrevPrimaryRoute != "PLAN" {
		t.Fatalf("session = %+v", got)
	}
	if ttl := r.Client.TTL(ctx, r.Prefix+"chat:session:"+sid).Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("session ttl %v", ttl)
	}
	if err := s.SetLocalOnly(ctx, sid, false); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.Load(ctx, sid, "20260101", 10); got.LocalOnly || got.PrevPrimaryRoute != "PLAN" {
		t.Fatalf("after reset = %+v", got)
	}
}

func TestPendingSetUnderConcurrency(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.AddPending(ctx, sid, fmt.Sprintf("job_20260101_%03d", i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := s.Load(ctx, sid, "20260101", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Pending) != n || got.Pending[0] != "job_20260101_000" {
		t.Fatalf("pending = %d %v", len(got.Pending), got.Pending[:3])
	}
	if err := s.AddPending(ctx, sid, "job_20260101_000"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemovePending(ctx, sid, "job_20260101_001"); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.Load(ctx, sid, "20260101", 10); len(got.Pending) != n-1 {
		t.Fatalf("after add-again and remove: %d", len(got.Pending))
	}
}

func TestMemoryBoundAndDays(t *testing.T) {
	s, r := newStore(t)
	ctx := context.Background()
	for i := range 6 {
		if err := s.AppendTurns(ctx, sid, "20260101", 4, domain.Turn{Role: "user", Text: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Load(ctx, sid, "20260101", 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Memory) != 4 || got.Memory[0].Text != "2" || got.Memory[3].Text != "5" {
		t.Fatalf("memory = %+v", got.Memory)
	}
	if got, _ = s.Load(ctx, sid, "20260101", 2); len(got.Memory) != 2 || got.Memory[0].Text != "4" {
		t.Fatalf("bounded load = %+v", got.Memory)
	}
	if got, _ = s.Load(ctx, sid, "20260102", 4); len(got.Memory) != 0 {
		t.Fatalf("next day sees %+v", got.Memory)
	}
	if ttl := r.Client.TTL(ctx, r.Prefix+"chat:session:"+sid+":mem:20260101").Val(); ttl <= 0 || ttl > 48*time.Hour {
		t.Fatalf("memory ttl %v", ttl)
	}
}

func TestOptions(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	if _, err := s.LoadOptions(ctx, "job_20260101_001"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("missing options: %v", err)
	}
	if err := s.SaveOptions(ctx, "job_20260101_001", []byte{1, 2, 3}, time.Minute); err != nil {
		t.Fatal(err)
	}
	b, err := s.LoadOptions(ctx, "job_20260101_001")
	if err != nil || len(b) != 3 {
		t.Fatalf("options %v %v", b, err)
	}
}

func TestRedisDownIsUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	s := NewRedis(c, "x:", time.Hour)
	ctx := context.Background()
	for name, err := range map[string]error{
		"load":    func() error { _, err := s.Load(ctx, sid, "20260101", 4); return err }(),
		"local":   s.SetLocalOnly(ctx, sid, true),
		"pending": s.AddPending(ctx, sid, "job_20260101_001"),
		"memory":  s.AppendTurns(ctx, sid, "20260101", 4, domain.Turn{Text: "x"}),
	} {
		if !errors.Is(err, domain.ErrUnavailable) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	r := testinfra.Redis(b)
	s := NewRedis(r.Client, r.Prefix, time.Hour)
	ctx := context.Background()
	for i := range 20 {
		_ = s.AppendTurns(ctx, sid, "20260101", 20, domain.Turn{Role: "user", Text: fmt.Sprint("turn ", i)})
	}
	_ = s.AddPending(ctx, sid, "job_20260101_001")
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Load(ctx, sid, "20260101", 20); err != nil {
			b.Fatal(err)
		}
	}
}
