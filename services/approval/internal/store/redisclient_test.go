//go:build !sqliteonly

package store

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

func TestRedisClientCommands(t *testing.T) {
	ctx := context.Background()
	r := testinfra.Redis(t)
	c := NewRedisClient(RedisOptions{Addr: r.Addr})
	defer c.Close()
	key := r.Prefix + "k"

	if v, ok, err := c.Get(ctx, key); v != nil || ok || err != nil {
		t.Fatalf("get of a missing key: %q %v %v", v, ok, err)
	}
	value := []byte("a\r\nb\x00 \xff binary-safe")
	if err := c.Set(ctx, key, value, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	if ttl := r.Client.TTL(ctx, key).Val(); ttl <= 80*time.Second || ttl > 90*time.Second {
		t.Errorf("TTL after EX 90: %v", ttl)
	}
	if v, ok, err := c.Get(ctx, key); string(v) != string(value) || !ok || err != nil {
		t.Fatalf("get: %q %v %v", v, ok, err)
	}
	if err := c.Set(ctx, key, []byte("x"), 1500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if ttl := r.Client.PTTL(ctx, key).Val(); ttl <= time.Second || ttl > 1500*time.Millisecond {
		t.Errorf("PTTL after PX 1500: %v", ttl)
	}
	if err := c.Set(ctx, key, []byte("y"), 0); err != nil {
		t.Fatal(err)
	}
	if ttl := r.Client.TTL(ctx, key).Val(); ttl != -1 {
		t.Errorf("TTL after a set without one: %v", ttl)
	}
	if v, ok, err := c.GetDel(ctx, key); string(v) != "y" || !ok || err != nil {
		t.Fatalf("getdel: %q %v %v", v, ok, err)
	}
	if n := r.Client.Exists(ctx, key).Val(); n != 0 {
		t.Error("getdel left the key")
	}
	if _, ok, err := c.GetDel(ctx, key); ok || err != nil {
		t.Fatalf("getdel of a missing key: %v %v", ok, err)
	}

	// An error reply is an error, and the connection stays usable.
	if err := r.Client.RPush(ctx, key, "l").Err(); err != nil {
		t.Fatal(err)
	}
	var re RedisError
	if _, _, err := c.Get(ctx, key); !errors.As(err, &re) || !strings.HasPrefix(string(re), "WRONGTYPE") {
		t.Fatalf("get of a list: %v", err)
	}
	r.Client.Del(ctx, key)
	if _, _, err := c.Get(ctx, key); err != nil {
		t.Fatalf("after an error reply: %v", err)
	}
}

// The database of the options is selected and the password sent on every new connection.
func TestRedisClientSelectsItsDatabaseAndAuthenticates(t *testing.T) {
	ctx := context.Background()
	r := testinfra.Redis(t)
	other := redis.NewClient(&redis.Options{Addr: r.Addr, DB: 3})
	defer other.Close()
	key := r.Prefix + "db3"
	t.Cleanup(func() { other.Del(context.Background(), key) })
	c := NewRedisClient(RedisOptions{Addr: r.Addr, DB: 3})
	defer c.Close()
	if err := c.Set(ctx, key, []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := other.Get(ctx, key).Val(); got != "v" {
		t.Errorf("database 3 holds %q", got)
	}
	if n := r.Client.Exists(ctx, key).Val(); n != 0 {
		t.Error("the key went to database 0")
	}

	withPassword := NewRedisClient(RedisOptions{Addr: r.Addr, Password: "not-the-password", MaxRetries: -1})
	defer withPassword.Close()
	_, _, err := withPassword.Get(ctx, key)
	var re RedisError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "auth") {
		t.Errorf("a wrong password (or none configured) is not refused at AUTH: %v", err)
	}
}

// A pooled connection the server closed is replaced: the command is tried again.
func TestRedisClientRetriesOnADroppedConnection(t *testing.T) {
	ctx := context.Background()
	r := testinfra.Redis(t)
	c := NewRedisClient(RedisOptions{Addr: r.Addr})
	defer c.Close()
	key := r.Prefix + "k"
	if err := c.Set(ctx, key, []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	if len(c.idle) != 1 {
		c.mu.Unlock()
		t.Fatalf("%d idle connections, want 1", len(c.idle))
	}
	local := c.idle[0].conn.LocalAddr().String()
	c.mu.Unlock()
	if err := r.Client.ClientKillByFilter(ctx, "ADDR", local).Err(); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := c.Get(ctx, key); string(v) != "v" || !ok || err != nil {
		t.Fatalf("get after the server dropped the connection: %q %v %v", v, ok, err)
	}

	noRetry := NewRedisClient(RedisOptions{Addr: r.Addr, MaxRetries: -1})
	defer noRetry.Close()
	if _, _, err := noRetry.Get(ctx, key); err != nil {
		t.Fatal(err)
	}
	noRetry.mu.Lock()
	local = noRetry.idle[0].conn.LocalAddr().String()
	noRetry.mu.Unlock()
	if err := r.Client.ClientKillByFilter(ctx, "ADDR", local).Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := noRetry.Get(ctx, key); err == nil {
		t.Error("without retries, a dropped connection went unnoticed")
	}
}

func TestRedisClientUnreachable(t *testing.T) {
	c := NewRedisClient(RedisOptions{Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	_, _, err := c.Get(context.Background(), "k")
	var ne net.Error
	if !errors.As(err, &ne) {
		t.Fatalf("get from a closed port: %v", err)
	}
	if !errors.Is(Unavailable(err), domain.ErrUnavailable) {
		t.Errorf("not marked unavailable: %v", Unavailable(err))
	}
}

// A command whose connection drops is tried MaxRetries more times, each on a new connection.
func TestRedisClientRetryCount(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 100)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			_ = conn.Close()
		}
	}()
	for _, tc := range []struct{ retries, want int }{{0, 4}, {-1, 1}, {1, 2}} {
		c := NewRedisClient(RedisOptions{Addr: ln.Addr().String(), MaxRetries: tc.retries})
		_, _, err := c.Get(context.Background(), "k")
		_ = c.Close()
		if err == nil {
			t.Fatalf("MaxRetries %d: a server that hangs up answered", tc.retries)
		}
		n := 0
		for len(accepted) > 0 {
			<-accepted
			n++
		}
		if n != tc.want {
			t.Errorf("MaxRetries %d: %d connections, want %d", tc.retries, n, tc.want)
		}
	}
}

// Every command gets a span, named by the command, failed when the command failed; a missing
// key is not a failure.
func TestRedisClientSpans(t *testing.T) {
	ctx := context.Background()
	r := testinfra.Redis(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	c := NewRedisClient(RedisOptions{Addr: r.Addr, TracerProvider: tp})
	defer c.Close()
	_, _, _ = c.Get(ctx, r.Prefix+"missing")
	_ = c.Set(ctx, r.Prefix+"k", []byte("v"), time.Minute)
	r.Client.RPush(ctx, r.Prefix+"l", "x")
	_, _, _ = c.GetDel(ctx, r.Prefix+"l")
	got := map[string]codes.Code{}
	for _, sp := range rec.Ended() {
		got[sp.Name()] = sp.Status().Code
		var system, op string
		for _, a := range sp.Attributes() {
			switch a.Key {
			case "db.system":
				system = a.Value.AsString()
			case "db.operation":
				op = a.Value.AsString()
			}
		}
		if system != "redis" || "redis "+strings.ToUpper(op) != sp.Name() {
			t.Errorf("span %s: db.system %q, db.operation %q", sp.Name(), system, op)
		}
	}
	if got["redis GET"] != codes.Unset || got["redis SET"] != codes.Unset || got["redis GETDEL"] != codes.Error || len(got) != 3 {
		t.Errorf("spans: %v", got)
	}
}

// The pool holds at most PoolSize connections: a command waits for one, up to the pool timeout.
func TestRedisClientPoolIsBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var (
		mu     sync.Mutex
		opened int
	)
	release := make(chan struct{})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			opened++
			mu.Unlock()
			go func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					// Read one command (an array of bulk strings), answer after release.
					if _, err := readCommand(br); err != nil {
						return
					}
					<-release
					_, _ = conn.Write([]byte("$1\r\nv\r\n"))
				}
			}()
		}
	}()
	c := NewRedisClient(RedisOptions{Addr: ln.Addr().String(), PoolSize: 2, ReadTimeout: 30 * time.Second, MaxRetries: -1})
	defer c.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := c.Get(context.Background(), "k")
			errs <- err
		}()
	}
	// Both connections are open and busy; the other three commands wait for one.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := opened
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
	}
	time.Sleep(50 * time.Millisecond) // room for a third connection, were the pool unbounded
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if opened != 2 {
		t.Errorf("%d connections opened, want the pool's 2", opened)
	}
}

// fakeRedis serves each connection with answer, which reads the commands itself.
func fakeRedis(t *testing.T, answer func(net.Conn, *bufio.Reader)) string {
	t.Helper()
	return testinfra.ServeConns(t, func(c net.Conn) { answer(c, bufio.NewReader(c)) })
}

// readCommand reads one RESP command (an array of bulk strings) and returns its arguments.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	args := make([]string, 0, n)
	for range n {
		if _, err := r.ReadString('\n'); err != nil {
			return nil, err
		}
		a, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		args = append(args, strings.TrimSuffix(a, "\r\n"))
	}
	return args, nil
}

// A server that answers with arrays nested without end is refused at the first array, not
// followed into it (the stack would overflow and take the process down).
func TestRedisClientRefusesArrayReplies(t *testing.T) {
	addr := fakeRedis(t, func(conn net.Conn, r *bufio.Reader) {
		if _, err := readCommand(r); err != nil {
			return
		}
		nested := strings.Repeat("*1\r\n", 1<<16)
		_, _ = conn.Write([]byte(nested))
	})
	c := NewRedisClient(RedisOptions{Addr: addr, MaxRetries: -1, ReadTimeout: 2 * time.Second})
	defer c.Close()
	if _, _, err := c.Get(context.Background(), "k"); err == nil || !strings.Contains(err.Error(), "array") {
		t.Fatalf("nested arrays: %v, want an unexpected array error", err)
	}
}

// A write whose reply is lost after it was sent is not sent again (the server may have applied
// it: a SET sent again after a switch-off would bring the grant back); a read is.
func TestRedisClientDoesNotResendAWriteItMayHaveApplied(t *testing.T) {
	var sets, gets atomic.Int64
	addr := fakeRedis(t, func(conn net.Conn, r *bufio.Reader) {
		for {
			args, err := readCommand(r)
			if err != nil {
				return
			}
			switch strings.ToLower(args[0]) {
			case "set":
				sets.Add(1)
			case "get":
				gets.Add(1)
			}
			// Applied, but the reply comes after the client's read deadline.
			time.Sleep(300 * time.Millisecond)
			_, _ = conn.Write([]byte("+OK\r\n"))
		}
	})
	c := NewRedisClient(RedisOptions{Addr: addr, MaxRetries: 3, ReadTimeout: 100 * time.Millisecond})
	defer c.Close()
	ctx := context.Background()
	if _, err := c.do(ctx, "set", "k", "v"); err == nil {
		t.Fatal("a SET whose reply timed out succeeded")
	}
	if n := sets.Load(); n != 1 {
		t.Fatalf("the SET was sent %d times, want once", n)
	}
	_, _, _ = c.Get(ctx, "k")
	deadline := time.Now().Add(5 * time.Second)
	for gets.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := gets.Load(); n != 4 {
		t.Fatalf("the GET was sent %d times, want 4 (three retries)", n)
	}
}
