// Package embedredis runs an in-process Redis-compatible server (miniredis) for the embedded
// single-machine default, and snapshots its data to a file so a restart keeps sessions, counters,
// the Auto-Approve grant and unprocessed stream entries.
package embedredis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Server is a running embedded Redis.
type Server struct {
	mr       *miniredis.Miniredis
	client   *redis.Client
	snapshot string
}

// Start listens on addr ("127.0.0.1:0" for any port) and, when snapshot is non-empty and the
// file exists, loads it.
func Start(ctx context.Context, addr, snapshot string) (*Server, error) {
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr(addr); err != nil {
		return nil, fmt.Errorf("embedded redis: listen %s: %w", addr, err)
	}
	s := &Server{mr: mr, snapshot: snapshot, client: redis.NewClient(&redis.Options{Addr: mr.Addr()})}
	if snapshot != "" {
		if err := s.load(ctx); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Addr is host:port of the server.
func (s *Server) Addr() string { return s.mr.Addr() }

// Close stops the server without saving.
func (s *Server) Close() {
	_ = s.client.Close()
	s.mr.Close()
}

// entry is one key in the snapshot file.
type entry struct {
	Key    string            `json:"key"`
	Type   string            `json:"type"`
	TTLms  int64             `json:"ttl_ms,omitempty"`
	String string            `json:"string,omitempty"`
	Hash   map[string]string `json:"hash,omitempty"`
	List   []string          `json:"list,omitempty"`
	Set    []string          `json:"set,omitempty"`
	ZSet   []redis.Z         `json:"zset,omitempty"`
	Stream []streamEntry     `json:"stream,omitempty"`
	// Groups are the stream's consumer groups, so a restart neither replays acknowledged
	// entries nor loses unacknowledged ones.
	Groups []streamGroup `json:"groups,omitempty"`
}

// streamGroup is a consumer group: reading resumes after Resume (just before the oldest entry
// still pending, or after the last delivered one).
type streamGroup struct {
	Name   string `json:"name"`
	Resume string `json:"resume"`
}

type streamEntry struct {
	ID     string         `json:"id"`
	Values map[string]any `json:"values"`
}

// Save writes every key to the snapshot file atomically (temp file + rename).
func (s *Server) Save(ctx context.Context) error {
	if s.snapshot == "" {
		return nil
	}
	var entries []entry
	iter := s.client.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		e, err := s.dumpKey(ctx, iter.Val())
		if err != nil {
			return err
		}
		if e != nil {
			entries = append(entries, *e)
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("embedded redis: scan: %w", err)
	}
	data, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.snapshot), 0o700); err != nil {
		return err
	}
	tmp := s.snapshot + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("embedded redis: write snapshot: %w", err)
	}
	return os.Rename(tmp, s.snapshot)
}

func (s *Server) dumpKey(ctx context.Context, key string) (*entry, error) {
	typ, err := s.client.Type(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	e := &entry{Key: key, Type: typ}
	if ttl, err := s.client.PTTL(ctx, key).Result(); err == nil && ttl > 0 {
		e.TTLms = ttl.Milliseconds()
	}
	switch typ {
	case "string":
		e.String, err = s.client.Get(ctx, key).Result()
	case "hash":
		e.Hash, err = s.client.HGetAll(ctx, key).Result()
	case "list":
		e.List, err = s.client.LRange(ctx, key, 0, -1).Result()
	case "set":
		e.Set, err = s.client.SMembers(ctx, key).Result()
	case "zset":
		e.ZSet, err = s.client.ZRangeWithScores(ctx, key, 0, -1).Result()
	case "stream":
		var msgs []redis.XMessage
		msgs, err = s.client.XRange(ctx, key, "-", "+").Result()
		for _, m := range msgs {
			e.Stream = append(e.Stream, streamEntry{ID: m.ID, Values: m.Values})
		}
		if err == nil {
			e.Groups, err = s.dumpGroups(ctx, key)
		}
	case "none":
		return nil, nil
	default:
		return nil, fmt.Errorf("embedded redis: key %s has unsupported type %s", key, typ)
	}
	if err != nil {
		return nil, fmt.Errorf("embedded redis: dump %s: %w", key, err)
	}
	return e, nil
}

func (s *Server) load(ctx context.Context) error {
	data, err := os.ReadFile(s.snapshot)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("embedded redis: read snapshot: %w", err)
	}
	var entries []entry
	if err := json.Unmarshal(data, &entries); err != nil {
		return fmt.Errorf("embedded redis: snapshot %s is corrupt: %w", s.snapshot, err)
	}
	for _, e := range entries {
		if err := s.restore(ctx, e); err != nil {
			return fmt.Errorf("embedded redis: restore %s: %w", e.Key, err)
		}
	}
	return nil
}

func (s *Server) restore(ctx context.Context, e entry) error {
	c := s.client
	var err error
	switch e.Type {
	case "string":
		err = c.Set(ctx, e.Key, e.String, 0).Err()
	case "hash":
		if len(e.Hash) > 0 {
			err = c.HSet(ctx, e.Key, e.Hash).Err()
		}
	case "list":
		if len(e.List) > 0 {
			err = c.RPush(ctx, e.Key, toAny(e.List)...).Err()
		}
	case "set":
		if len(e.Set) > 0 {
			err = c.SAdd(ctx, e.Key, toAny(e.Set)...).Err()
		}
	case "zset":
		if len(e.ZSet) > 0 {
			err = c.ZAdd(ctx, e.Key, e.ZSet...).Err()
		}
	case "stream":
		for _, m := range e.Stream {
			if err = c.XAdd(ctx, &redis.XAddArgs{Stream: e.Key, ID: m.ID, Values: m.Values}).Err(); err != nil {
				break
			}
		}
		for _, g := range e.Groups {
			if err == nil {
				err = c.XGroupCreateMkStream(ctx, e.Key, g.Name, g.Resume).Err()
			}
		}
	default:
		return fmt.Errorf("unsupported type %s", e.Type)
	}
	if err != nil {
		return err
	}
	if e.TTLms > 0 {
		return c.PExpire(ctx, e.Key, time.Duration(e.TTLms)*time.Millisecond).Err()
	}
	return nil
}

func toAny(in []string) []any {
	out := make([]any, len(in))
	for i, s := range in {
		out[i] = s
	}
	return out
}

func (s *Server) dumpGroups(ctx context.Context, key string) ([]streamGroup, error) {
	groups, err := s.client.XInfoGroups(ctx, key).Result()
	if err != nil {
		return nil, fmt.Errorf("groups of %s: %w", key, err)
	}
	var out []streamGroup
	for _, g := range groups {
		resume := g.LastDeliveredID
		pending, err := s.client.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: g.Name, Start: "-", End: "+", Count: 1}).Result()
		if err != nil {
			return nil, fmt.Errorf("pending of %s/%s: %w", key, g.Name, err)
		}
		if len(pending) > 0 {
			resume = before(pending[0].ID)
		}
		out = append(out, streamGroup{Name: g.Name, Resume: resume})
	}
	return out, nil
}

// before is the stream id just before id ("ms-seq"), so reading resumes at id itself.
func before(id string) string {
	ms, seq, ok := strings.Cut(id, "-")
	if !ok {
		return "0"
	}
	m, err1 := strconv.ParseUint(ms, 10, 64)
	n, err2 := strconv.ParseUint(seq, 10, 64)
	switch {
	case err1 != nil || err2 != nil:
		return "0"
	case n > 0:
		return fmt.Sprintf("%d-%d", m, n-1)
	case m > 0:
		return fmt.Sprintf("%d-%d", m-1, uint64(math.MaxUint64))
	}
	return "0"
}
