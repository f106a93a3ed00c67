//go:build !sqliteonly

package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/runner"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// RedisClient is the Redis client of the grant store: the three commands it uses (GET, SET
// with a TTL, GETDEL) over RESP, a bounded pool of connections, retries of network failures
// and a span per command. A general client would add some 2 MB to the binary for commands the
// store never sends.
type RedisClient struct {
	opt RedisOptions
	tr  trace.Tracer
	// slots holds one token per connection that may be open.
	slots chan struct{}

	mu     sync.Mutex
	idle   []*redisConn
	closed bool
}

// RedisOptions configures a RedisClient; zero fields take the defaults.
type RedisOptions struct {
	Addr     string
	DB       int
	Password string
	// DialTimeout bounds opening a connection (default 5 s); ReadTimeout and WriteTimeout bound
	// each reply and each command sent (default 3 s; WriteTimeout defaults to ReadTimeout).
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
	// MaxRetries is how often a command failed by the network (or by a server that is loading or
	// read-only) is tried again, after 8 ms to 512 ms (default 3; -1: never).
	MaxRetries int
	// PoolSize caps the open connections (default 10 per CPU Go runs on); a command waits up to
	// ReadTimeout + 1 s for one.
	PoolSize int
	// ConnMaxIdleTime closes a connection idle for longer (default 30 minutes).
	ConnMaxIdleTime time.Duration
	// TracerProvider, when set, gives every command a span ("redis GET"; retries included).
	TracerProvider trace.TracerProvider
}

// ErrRedisClosed is returned by a closed client.
var ErrRedisClosed = errors.New("redis: client is closed")

// errRedisPoolTimeout: every connection stayed busy for the pool timeout.
var errRedisPoolTimeout = errors.New("redis: connection pool timeout")

// RedisError is an error reply of the server.
type RedisError string

func (e RedisError) Error() string { return string(e) }

// NewRedisClient returns a client; it connects when a command needs a connection.
func NewRedisClient(opt RedisOptions) *RedisClient {
	if opt.DialTimeout == 0 {
		opt.DialTimeout = 5 * time.Second
	}
	if opt.ReadTimeout == 0 {
		opt.ReadTimeout = 3 * time.Second
	}
	if opt.WriteTimeout == 0 {
		opt.WriteTimeout = opt.ReadTimeout
	}
	switch {
	case opt.MaxRetries == 0:
		opt.MaxRetries = 3
	case opt.MaxRetries < 0:
		opt.MaxRetries = 0
	}
	if opt.PoolSize <= 0 {
		opt.PoolSize = 10 * runtime.GOMAXPROCS(0)
	}
	if opt.ConnMaxIdleTime == 0 {
		opt.ConnMaxIdleTime = 30 * time.Minute
	}
	c := &RedisClient{opt: opt, slots: make(chan struct{}, opt.PoolSize)}
	if opt.TracerProvider != nil {
		c.tr = opt.TracerProvider.Tracer(instrumentation)
	}
	return c
}

// Get returns the value of key; ok is false when there is no such key.
func (c *RedisClient) Get(ctx context.Context, key string) (value []byte, ok bool, err error) {
	return c.bulk(ctx, "get", key)
}

// GetDel returns the value of key and deletes the key; ok is false when there was none.
func (c *RedisClient) GetDel(ctx context.Context, key string) (value []byte, ok bool, err error) {
	return c.bulk(ctx, "getdel", key)
}

// Set sets key to value, expiring after ttl (none when ttl is 0): whole seconds go as EX, any
// other duration as PX in milliseconds.
func (c *RedisClient) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	args := []string{"set", key, string(value)}
	switch {
	case ttl < 0:
		return fmt.Errorf("redis: set %s: negative TTL %v", key, ttl)
	case ttl == 0:
	case ttl < time.Second || ttl%time.Second != 0:
		args = append(args, "px", strconv.FormatInt(max(1, ttl.Milliseconds()), 10))
	default:
		args = append(args, "ex", strconv.FormatInt(int64(ttl/time.Second), 10))
	}
	r, err := c.do(ctx, args...)
	if err != nil {
		return err
	}
	if r.kind != '+' || r.str != "OK" {
		return fmt.Errorf("redis: set %s: unexpected reply %q", key, r.str)
	}
	return nil
}

func (c *RedisClient) bulk(ctx context.Context, args ...string) ([]byte, bool, error) {
	r, err := c.do(ctx, args...)
	if err != nil {
		return nil, false, err
	}
	switch {
	case r.kind == '$' && r.null:
		return nil, false, nil
	case r.kind == '$':
		return []byte(r.str), true, nil
	}
	return nil, false, fmt.Errorf("redis: %s: unexpected reply %q", args[0], r.str)
}

// Close closes the idle connections; the busy ones close when their command ends.
func (c *RedisClient) Close() error {
	c.mu.Lock()
	idle := c.idle
	c.idle, c.closed = nil, true
	c.mu.Unlock()
	for _, cn := range idle {
		_ = cn.conn.Close()
	}
	return nil
}

// do runs one command, tried again on the failures worth retrying, in one span.
func (c *RedisClient) do(ctx context.Context, args ...string) (reply, error) {
	end := func(error) {}
	if c.tr != nil {
		var span trace.Span
		ctx, span = c.tr.Start(ctx, "redis "+strings.ToUpper(args[0]), trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("db.system", "redis"), attribute.String("db.operation", args[0])))
		end = func(err error) {
			if err != nil {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
			span.End()
		}
	}
	var (
		r   reply
		err error
	)
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if err := runner.Sleep(ctx, redisBackoff(attempt)); err != nil {
				break
			}
		}
		r, err = c.once(ctx, args)
		if err == nil && r.kind == '-' {
			err = RedisError(r.str)
		}
		if err == nil || attempt >= c.opt.MaxRetries || !redisRetryable(err) {
			break
		}
		// A write the server may have applied is not sent again: its reply was lost, not its
		// effect (a SET sent again after a switch-off would bring a grant back).
		var sent *sentError
		if errors.As(err, &sent) && !readOnlyCommand(args[0]) {
			break
		}
	}
	end(err)
	return r, err
}

// once sends the command on a pooled connection and reads its reply; a connection that failed
// is closed, any other goes back to the pool.
func (c *RedisClient) once(ctx context.Context, args []string) (reply, error) {
	cn, err := c.conn(ctx)
	if err != nil {
		return reply{}, err
	}
	r, err := cn.roundTrip(c.opt, args)
	c.put(cn, err)
	return r, err
}

// conn takes an idle connection or opens one, waiting for a free slot.
func (c *RedisClient) conn(ctx context.Context) (*redisConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case c.slots <- struct{}{}:
	default:
		t := time.NewTimer(c.opt.ReadTimeout + time.Second)
		defer t.Stop()
		select {
		case c.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			return nil, errRedisPoolTimeout
		}
	}
	now := time.Now()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.slots
		return nil, ErrRedisClosed
	}
	for len(c.idle) > 0 {
		cn := c.idle[len(c.idle)-1]
		c.idle = c.idle[:len(c.idle)-1]
		if now.Sub(cn.used) <= c.opt.ConnMaxIdleTime {
			c.mu.Unlock()
			return cn, nil
		}
		_ = cn.conn.Close()
	}
	c.mu.Unlock()
	cn, err := c.dial(ctx)
	if err != nil {
		<-c.slots
		return nil, err
	}
	return cn, nil
}

// put returns cn to the pool, or closes it after err (other than an error reply).
func (c *RedisClient) put(cn *redisConn, err error) {
	defer func() { <-c.slots }()
	if err != nil {
		_ = cn.conn.Close()
		return
	}
	cn.used = time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		_ = cn.conn.Close()
		return
	}
	c.idle = append(c.idle, cn)
}

// dial opens a connection, authenticated and on the database of the options.
func (c *RedisClient) dial(ctx context.Context) (*redisConn, error) {
	d := net.Dialer{Timeout: c.opt.DialTimeout, KeepAlive: 5 * time.Minute}
	nc, err := d.DialContext(ctx, "tcp", c.opt.Addr)
	if err != nil {
		return nil, err
	}
	cn := &redisConn{conn: nc, r: bufio.NewReader(nc), w: bufio.NewWriter(nc)}
	var setup [][]string
	if c.opt.Password != "" {
		setup = append(setup, []string{"auth", c.opt.Password})
	}
	if c.opt.DB != 0 {
		setup = append(setup, []string{"select", strconv.Itoa(c.opt.DB)})
	}
	for _, args := range setup {
		r, err := cn.exchange(c.opt, args)
		if err == nil && r.kind == '-' {
			err = fmt.Errorf("redis %s: %w", args[0], RedisError(r.str))
		}
		if err != nil {
			_ = nc.Close()
			return nil, err
		}
	}
	return cn, nil
}

// redisConn is one connection to the server.
type redisConn struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	used time.Time
}

// reply is a reply the store reads: a simple string (+), an error (-), an integer (:) or a bulk
// string ($, null when the key is missing). An array is refused (the connection is closed).
type reply struct {
	kind byte
	str  string
	null bool
}

// sentError is a failure after the command may have reached the server (while writing it or
// reading its reply): the server may have applied it.
type sentError struct{ err error }

func (e *sentError) Error() string { return e.err.Error() }
func (e *sentError) Unwrap() error { return e.err }

// readOnlyCommand: sending it again changes nothing.
func readOnlyCommand(name string) bool { return strings.EqualFold(name, "get") }

func (cn *redisConn) roundTrip(opt RedisOptions, args []string) (reply, error) {
	r, err := cn.exchange(opt, args)
	if err != nil {
		return reply{}, &sentError{err}
	}
	return r, nil
}

func (cn *redisConn) exchange(opt RedisOptions, args []string) (reply, error) {
	if err := cn.conn.SetWriteDeadline(time.Now().Add(opt.WriteTimeout)); err != nil {
		return reply{}, err
	}
	cn.w.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		cn.w.WriteString("$" + strconv.Itoa(len(a)) + "\r\n")
		cn.w.WriteString(a)
		cn.w.WriteString("\r\n")
	}
	if err := cn.w.Flush(); err != nil {
		return reply{}, err
	}
	if err := cn.conn.SetReadDeadline(time.Now().Add(opt.ReadTimeout)); err != nil {
		return reply{}, err
	}
	return readReply(cn.r)
}

// maxBulk bounds a bulk string read (a grant is a few hundred bytes).
const maxBulk = 1 << 20

func readReply(r *bufio.Reader) (reply, error) {
	line, err := readLine(r)
	if err != nil {
		return reply{}, err
	}
	if len(line) == 0 {
		return reply{}, errors.New("redis: empty reply line")
	}
	kind, rest := line[0], line[1:]
	switch kind {
	case '+', '-', ':':
		return reply{kind: kind, str: rest}, nil
	case '$':
		n, err := strconv.Atoi(rest)
		if err != nil || n < -1 || n > maxBulk {
			return reply{}, fmt.Errorf("redis: bad bulk length %q", rest)
		}
		if n == -1 {
			return reply{kind: '$', null: true}, nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return reply{}, err
		}
		if b[n] != '\r' || b[n+1] != '\n' {
			return reply{}, errors.New("redis: bulk string without CRLF")
		}
		return reply{kind: '$', str: string(b[:n])}, nil
	case '*':
		// No command of the store answers with an array: a server that sends one is not
		// followed into it (nested arrays would recurse without bound).
		return reply{}, errors.New("redis: unexpected array reply")
	}
	return reply{}, fmt.Errorf("redis: unknown reply type %q", kind)
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return "", errors.New("redis: reply line too long")
		}
		return "", err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return "", errors.New("redis: reply line without CRLF")
	}
	return string(line[:len(line)-2]), nil
}

// redisRetryable: a dropped or refused connection, a timeout, or a server that
// cannot serve the command yet (loading, read-only replica, failover, too many clients).
func redisRetryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) {
		return true
	}
	var re RedisError
	if errors.As(err, &re) {
		s := string(re)
		for _, p := range []string{"LOADING ", "READONLY ", "MASTERDOWN ", "CLUSTERDOWN ", "TRYAGAIN "} {
			if strings.HasPrefix(s, p) {
				return true
			}
		}
		return s == "ERR max number of clients reached"
	}
	return false
}

// redisBackoff is the wait before retry attempt: 8 ms doubling up to 512 ms, with jitter.
func redisBackoff(attempt int) time.Duration {
	d := min(8*time.Millisecond<<min(attempt-1, 6), 512*time.Millisecond)
	return d/2 + rand.N(d/2+1)
}
