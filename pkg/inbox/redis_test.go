//go:build !sqliteonly

package inbox_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// Redis forgets its scripts when it restarts (or on SCRIPT FLUSH): Append loads the dedupe
// script again and goes on.
func TestRedisAppendSurvivesScriptFlush(t *testing.T) {
	r := testinfra.Redis(t)
	s, err := inbox.NewStore(r.Client, inbox.Config{Stream: r.Prefix + "inbox:test", Seal: testSeal})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Append(ctx, inbox.Event{ID: "a", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Client.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := s.Append(ctx, inbox.Event{ID: "b", Key: "k"}, inbox.Event{ID: "a", Key: "k"})
	if err != nil || res.Stored != 1 || res.Duplicate != 1 {
		t.Fatalf("after script flush: %+v, %v", res, err)
	}
}

// cutProxy forwards TCP to target until cut, which drops every connection and refuses new
// ones until restore: Redis going away and coming back.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	p := &cutProxy{ln: testinfra.Listen(t), target: target}
	go func() {
		for {
			c, err := p.ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.down {
				p.mu.Unlock()
				_ = c.Close()
				continue
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				p.mu.Unlock()
				_ = c.Close()
				continue
			}
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); _ = u.Close() }()
			go func() { _, _ = io.Copy(c, u); _ = c.Close() }()
		}
	}()
	t.Cleanup(func() { _ = p.ln.Close(); p.cut() })
	return p
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

func (p *cutProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// The consumer keeps going through a Redis outage: reads fail and are retried with backoff,
// and what was appended meanwhile is handled once Redis is back, each event once.
func TestRedisConsumerSurvivesOutage(t *testing.T) {
	r := testinfra.Redis(t)
	p := startCutProxy(t, r.Addr)
	viaProxy := redis.NewClient(&redis.Options{Addr: p.ln.Addr().String(), DialTimeout: time.Second})
	t.Cleanup(func() { _ = viaProxy.Close() })
	cfg := inbox.Config{Stream: r.Prefix + "inbox:test", Group: "g", Seal: testSeal}
	s, err := inbox.NewStore(r.Client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	logs := &testinfra.SyncBuffer{}
	ccfg := fastConsumer("c1")
	ccfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	seen := newHandled()
	runConsumer(t, inbox.RedisEngine(viaProxy), cfg, ccfg, func(_ context.Context, d inbox.Delivery) error {
		seen.add(d)
		return nil
	})
	if _, err := s.Append(ctx, inbox.Event{ID: "before", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first event", func() bool { return seen.times("before") == 1 })
	p.cut()
	if _, err := s.Append(ctx, inbox.Event{ID: "during", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a failed read", func() bool { return strings.Contains(logs.String(), "inbox.read_failed") })
	p.restore()
	waitFor(t, "the event appended during the outage", func() bool { return seen.times("during") == 1 })
	waitFor(t, "acknowledgement", settled(t, s))
	if seen.times("before") != 1 {
		t.Fatalf("the first event was handled %d times", seen.times("before"))
	}
}

// twoReadEntries appends two events of one key to a new stream and reads both as consumer c1.
func twoReadEntries(t *testing.T) (testinfra.RedisDB, inbox.Config, *inbox.Store, inbox.Queue, inbox.Result) {
	t.Helper()
	r := testinfra.Redis(t)
	cfg := inbox.Config{Stream: r.Prefix + "inbox:test", Group: "g", Seal: testSeal}
	s, err := inbox.NewStore(r.Client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := s.Append(ctx, inbox.Event{ID: "a", Key: "k"}, inbox.Event{ID: "b", Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	q := inbox.QueueOf(inbox.RedisEngine(r.Client), cfg)
	if err := q.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	if ids, err := q.Read(ctx, "c1", 10); err != nil || len(ids) != 2 {
		t.Fatalf("read %v, %v", ids, err)
	}
	return r, cfg, s, q, res
}

// The ack script is loaded again when Redis forgot its scripts, and acknowledges once.
func TestRedisAckSurvivesScriptFlush(t *testing.T) {
	r, cfg, s, q, res := twoReadEntries(t)
	ctx := context.Background()
	if err := r.Client.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	turn, err := q.Ack(ctx, "c1", "k", res.StreamIDs[0], res.StreamIDs[1])
	if err != nil || turn != "go" {
		t.Fatalf("ack after a script flush: %q, %v", turn, err)
	}
	order, err := r.Client.LRange(ctx, cfg.Stream+":order:k", 0, -1).Result()
	if err != nil || len(order) != 1 || order[0] != res.StreamIDs[1] {
		t.Fatalf("order %v, %v; want only the second entry", order, err)
	}
	if st := stats(t, s); st.Pending != 1 {
		t.Fatalf("pending %d, want 1", st.Pending)
	}
}

// Only the XACK can fail an ack: an order record Redis cannot change (not a list) leaves the
// entry acknowledged, and the ack answers no turn.
func TestRedisAckDoesNotDependOnTheOrder(t *testing.T) {
	r, cfg, s, q, res := twoReadEntries(t)
	ctx := context.Background()
	if err := r.Client.Set(ctx, cfg.Stream+":order:k", "not a list", 0).Err(); err != nil {
		t.Fatal(err)
	}
	turn, err := q.Ack(ctx, "c1", "k", res.StreamIDs[0], res.StreamIDs[1])
	if err != nil || turn != "unknown" {
		t.Fatalf("ack: %q, %v; want no error and no answer", turn, err)
	}
	if st := stats(t, s); st.Pending != 1 {
		t.Fatalf("pending %d, want 1", st.Pending)
	}
}
