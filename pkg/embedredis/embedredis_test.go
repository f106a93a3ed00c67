package embedredis

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startClient starts a server on the snapshot file snap and a client of it.
func startClient(t *testing.T, snap string) (*Server, *redis.Client) {
	t.Helper()
	s, err := Start(context.Background(), "127.0.0.1:0", snap)
	if err != nil {
		t.Fatal(err)
	}
	return s, redis.NewClient(&redis.Options{Addr: s.Addr()})
}

// restart saves s, stops it and its client c, and starts a new server on the snapshot; the
// new one and its client stop with the test.
func restart(t *testing.T, s *Server, c *redis.Client, snap string) *redis.Client {
	t.Helper()
	c.Close()
	if err := s.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, c2 := startClient(t, snap)
	t.Cleanup(s2.Close)
	t.Cleanup(func() { c2.Close() })
	return c2
}

func TestSnapshotSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	snap := filepath.Join(t.TempDir(), "redis.json")
	s, c := startClient(t, snap)
	c.Set(ctx, "p:jobid:20261121", "7", 48*time.Hour)
	c.HSet(ctx, "p:session:cli:me", "local_only", "1", "prev", "CODE")
	c.SAdd(ctx, "p:session:cli:me:pending", "job_20261121_001", "job_20261121_002")
	c.RPush(ctx, "p:memory", "a", "b")
	c.ZAdd(ctx, "p:z", redis.Z{Score: 2, Member: "x"})
	c.XAdd(ctx, &redis.XAddArgs{Stream: "p:events", ID: "1-1", Values: map[string]any{"body": "hello"}})
	c.Set(ctx, "p:autoapprove", "{}", 10*time.Minute)
	c2 := restart(t, s, c, snap)
	if v := c2.Get(ctx, "p:jobid:20261121").Val(); v != "7" {
		t.Errorf("counter = %q", v)
	}
	if ttl := c2.TTL(ctx, "p:autoapprove").Val(); ttl <= 9*time.Minute || ttl > 10*time.Minute {
		t.Errorf("ttl not kept: %v", ttl)
	}
	if v := c2.HGet(ctx, "p:session:cli:me", "prev").Val(); v != "CODE" {
		t.Errorf("hash = %q", v)
	}
	if n := c2.SCard(ctx, "p:session:cli:me:pending").Val(); n != 2 {
		t.Errorf("set card = %d", n)
	}
	if l := c2.LRange(ctx, "p:memory", 0, -1).Val(); len(l) != 2 || l[1] != "b" {
		t.Errorf("list = %v", l)
	}
	if z := c2.ZScore(ctx, "p:z", "x").Val(); z != 2 {
		t.Errorf("zset = %v", z)
	}
	msgs := c2.XRange(ctx, "p:events", "-", "+").Val()
	if len(msgs) != 1 || msgs[0].ID != "1-1" || msgs[0].Values["body"] != "hello" {
		t.Errorf("stream = %+v", msgs)
	}
}

func TestCorruptSnapshotIsAnError(t *testing.T) {
	snap := filepath.Join(t.TempDir(), "redis.json")
	if err := os.WriteFile(snap, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(context.Background(), "127.0.0.1:0", snap); err == nil {
		t.Fatal("corrupt snapshot accepted")
	}
}

// A consumer group survives a restart: acknowledged entries are not delivered again, the one
// still pending (read, not acknowledged) and the unread one are.
func TestSnapshotKeepsConsumerGroups(t *testing.T) {
	ctx := context.Background()
	snap := filepath.Join(t.TempDir(), "redis.json")
	s, c := startClient(t, snap)
	for _, id := range []string{"1-1", "2-0", "3-5"} {
		c.XAdd(ctx, &redis.XAddArgs{Stream: "p:inbox", ID: id, Values: map[string]any{"id": id}})
	}
	if err := c.XGroupCreate(ctx, "p:inbox", "gw", "0").Err(); err != nil {
		t.Fatal(err)
	}
	read, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "gw", Consumer: "a", Streams: []string{"p:inbox", ">"}, Count: 2}).Result()
	if err != nil || len(read[0].Messages) != 2 {
		t.Fatalf("read = %v, %v", read, err)
	}
	c.XAck(ctx, "p:inbox", "gw", "1-1") // 2-0 stays pending, 3-5 unread
	c2 := restart(t, s, c, snap)
	got, err := c2.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "gw", Consumer: "b", Streams: []string{"p:inbox", ">"}, Count: 10}).Result()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range got[0].Messages {
		ids = append(ids, m.ID)
	}
	if len(ids) != 2 || ids[0] != "2-0" || ids[1] != "3-5" {
		t.Fatalf("after restart the group delivers %v, want [2-0 3-5]", ids)
	}
}

func TestBefore(t *testing.T) {
	for in, want := range map[string]string{"5-3": "5-2", "5-0": "4-18446744073709551615", "0-0": "0", "x": "0"} {
		if got := before(in); got != want {
			t.Errorf("before(%q) = %q, want %q", in, got, want)
		}
	}
}
