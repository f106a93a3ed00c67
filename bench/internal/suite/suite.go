// Package suite builds the suite's binaries and runs them as real processes against local fakes
// of the LINE Messaging API and Ollama, in a Postgres schema and a Redis key prefix of their own.
package suite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/launch"

	"github.com/picoclaw-suite/picoclaw/bench/internal/faultproxy"
)

// Services are the suite's services in start order.
var Services = launch.Services

// Secrets and identities the fakes and the services share.
const (
	LineSecret = "bench-line-channel-secret-0123456789abcdef"
	LineToken  = "bench-line-access-token-0123456789abcdefgh"
	Approver   = "bench-approver"
)

// Build compiles every service of the repository at root into dir.
func Build(ctx context.Context, root, dir string) error {
	return launch.Build(ctx, root, dir, launch.ShippedServiceFlags...)
}

// Root finds the repository root (the directory holding go.work) from dir upwards.
func Root(dir string) (string, error) { return launch.Root(dir) }

// Stores are the Postgres DSN and the Redis address the tools run against:
// PICOCLAW_POSTGRES_DSN and PICOCLAW_REDIS_ADDR, else the local servers.
func Stores() (dsn, redisAddr string) {
	dsn, redisAddr = os.Getenv("PICOCLAW_POSTGRES_DSN"), os.Getenv("PICOCLAW_REDIS_ADDR")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	if redisAddr == "" {
		redisAddr = "127.0.0.1:6379"
	}
	return dsn, redisAddr
}

// GitCommit is the short commit of the repository at root ("" when unknown).
func GitCommit(root string) string {
	cmd := exec.Command("git", "rev-parse", "--short", "HEAD")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Isolation is a Postgres schema and a Redis key prefix owned by one run.
type Isolation struct {
	DSN, Schema string
	RedisAddr   string
	RedisPrefix string
	baseDSN     string
	redis       *redis.Client
}

// Isolate creates a fresh schema in the database at baseDSN and picks a fresh key prefix.
func Isolate(ctx context.Context, baseDSN, redisAddr string) (*Isolation, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "bench_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, baseDSN)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, fmt.Errorf("postgres: create schema: %w", err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("redis: %w", err)
	}
	return &Isolation{DSN: testinfra.WithSearchPath(baseDSN, name), Schema: name, RedisAddr: redisAddr,
		RedisPrefix: name + ":", baseDSN: baseDSN, redis: rdb}, nil
}

// Ping measures n sequential Redis PINGs and n Postgres SELECT 1 round trips.
func (iso *Isolation) Ping(ctx context.Context, n int) (redisRTT, pgRTT []time.Duration, err error) {
	conn, err := pgx.Connect(ctx, iso.DSN)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close(ctx)
	for range n {
		t0 := time.Now()
		if err := iso.redis.Ping(ctx).Err(); err != nil {
			return nil, nil, err
		}
		t1 := time.Now()
		if _, err := conn.Exec(ctx, "SELECT 1"); err != nil {
			return nil, nil, err
		}
		redisRTT, pgRTT = append(redisRTT, t1.Sub(t0)), append(pgRTT, time.Since(t1))
	}
	return redisRTT, pgRTT, nil
}

// Close drops the schema and deletes the keys under the prefix.
func (iso *Isolation) Close(ctx context.Context) error {
	var errs []error
	if conn, err := pgx.Connect(ctx, iso.baseDSN); err != nil {
		errs = append(errs, err)
	} else {
		_, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{iso.Schema}.Sanitize()+" CASCADE")
		errs = append(errs, err, conn.Close(ctx))
	}
	iter := iso.redis.Scan(ctx, 0, iso.RedisPrefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		errs = append(errs, iso.redis.Del(ctx, iter.Val()).Err())
	}
	errs = append(errs, iter.Err(), iso.redis.Close())
	return errors.Join(errs...)
}

// Options configure a suite run.
type Options struct {
	Root, BinDir, LogDir string
	Iso                  *Isolation
	LineAPI, Ollama      string
	// LineUsers are the LINE user ids on the allowlist.
	LineUsers []string
	// Services are the services to start, in start order (default: every one).
	Services []string
	// Replicas is how many processes run each of ReplicatedServices (default 1). With more than
	// one, every replica listens on ports of its own behind a round-robin balancer
	// (faultproxy) at the service's addresses and has a replica id of its own that it keeps
	// across restarts (<service>-<n>, as a StatefulSet's pod name: the gateways' consumer name,
	// the executor's claim holder, approval's sweeper lease holder, heartbeat's replica).
	Replicas int
	// Workspace is the executor's workspace (default: LogDir/workspace).
	Workspace string
	// Env is appended last (overrides).
	Env []string
}

// ReplicatedServices are the services that may run as several replicas: every consumer of
// the suite's queues and every stateless server in the message path.
var ReplicatedServices = []string{"approval", "executor", "router-shiro", "chat-mio", "gateway-line", "gateway-slack"}

// Proc is one running service process.
type Proc struct {
	*launch.Proc
	// PublicAddr is the service's public listener (webhooks, REST) — its balancer's when it
	// runs as replicas —, "" for services without one.
	PublicAddr string
	// Replica numbers the process among its service's replicas, from 1.
	Replica int
	spec    launch.Spec
	log     *os.File
}

// Suite is the running services.
type Suite struct {
	// Procs are the services' processes, the first replica of each.
	Procs map[string]*Proc
	// Replicas are every service's processes.
	Replicas  map[string][]*Proc
	order     []*Proc
	balancers []*faultproxy.Proxy
}

// Start launches the services one after another, each once the previous one is ready.
func Start(ctx context.Context, o Options) (*Suite, error) {
	layout, err := launch.NewLayout()
	if err != nil {
		return nil, err
	}
	workspace := o.Workspace
	if workspace == "" {
		workspace = filepath.Join(o.LogDir, "workspace")
	}
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		return nil, err
	}
	env := append(os.Environ(),
		"PICOCLAW_POSTGRES_DSN="+o.Iso.DSN,
		"PICOCLAW_REDIS_ADDR="+o.Iso.RedisAddr,
		"PICOCLAW_REDIS_KEY_PREFIX="+o.Iso.RedisPrefix,
		"PICOCLAW_EXECUTOR_WORKSPACE="+workspace,
		// Beside the workspace, never in the current directory.
		"PICOCLAW_EXECUTOR_STATE_DIR="+workspace+"-executor-state",
		"PICOCLAW_LINE_API_BASE_URL="+o.LineAPI,
		"PICOCLAW_LINE_ALLOWED_USERS="+strings.Join(o.LineUsers, ","),
		"PICOCLAW_SLACK_API_BASE_URL="+o.LineAPI,
		"PICOCLAW_SLACK_BOT_USER_ID=UBENCHBOT",
		"PICOCLAW_OLLAMA_BASE_URL="+o.Ollama,
		"PICOCLAW_APPROVAL_APPROVERS_CLI="+Approver,
		"LINE_CHANNEL_SECRET="+LineSecret,
		"LINE_CHANNEL_ACCESS_TOKEN="+LineToken,
		"SLACK_SIGNING_SECRET=bench-slack-signing-secret-0123456789abcdef",
		"SLACK_BOT_TOKEN=xoxb-bench-0123456789-abcdefghijklmnopqrstuv",
		"PICOCLAW_AUDIT_KEY=bench-audit-key-0123456789abcdef0123456789",
		"DEEPSEEK_API_KEY=bench-key", "OPENAI_API_KEY=bench-key", "ANTHROPIC_API_KEY=bench-key",
		"OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_TRACES_EXPORTER=none",
	)
	env = append(append(env, layout.Env()...), o.Env...)
	names := o.Services
	if len(names) == 0 {
		names = Services
	}
	st := &Suite{Procs: map[string]*Proc{}, Replicas: map[string][]*Proc{}}
	for _, name := range names {
		replicas := 1
		if o.Replicas > 1 && slices.Contains(ReplicatedServices, name) {
			replicas = o.Replicas
		}
		specs, public, err := st.replicaSpecs(name, replicas, layout, env)
		if err != nil {
			st.Stop()
			return nil, err
		}
		for i, sp := range specs {
			suffix := ""
			if i > 0 {
				suffix = fmt.Sprintf("-%d", i+1)
			}
			logf, err := os.Create(filepath.Join(o.LogDir, name+suffix+".log"))
			if err != nil {
				st.Stop()
				return nil, err
			}
			// relative paths of the default config (rules, persona) resolve in Root
			sp.BinDir, sp.Dir, sp.Output = o.BinDir, o.Root, logf
			lp, err := launch.Start(ctx, sp)
			if err != nil {
				logf.Close()
				st.Stop()
				return nil, fmt.Errorf("%w (log %s)", err, logf.Name())
			}
			p := &Proc{Proc: lp, PublicAddr: public, Replica: i + 1, spec: sp, log: logf}
			if i == 0 {
				st.Procs[name] = p
			}
			st.Replicas[name] = append(st.Replicas[name], p)
			st.order = append(st.order, p)
		}
	}
	return st, nil
}

// replicaSpecs are the launch specs of a service's replicas (without binary, directory and
// output) and its public address. One replica listens where the layout says; several get
// addresses of their own behind balancers at the layout's addresses.
func (s *Suite) replicaSpecs(name string, n int, layout launch.Layout, env []string) ([]launch.Spec, string, error) {
	public := layout.Public[name]
	if n <= 1 {
		return []launch.Spec{{Name: name, Env: env, Addr: layout.Addrs[name]}}, public, nil
	}
	addrs, err := testinfra.FreeAddrs(2 * n)
	if err != nil {
		return nil, "", err
	}
	internal, publics := addrs[:n], addrs[n:]
	b, err := faultproxy.Listen(layout.Addrs[name], internal...)
	if err != nil {
		return nil, "", err
	}
	s.balancers = append(s.balancers, b)
	if public != "" {
		pb, err := faultproxy.Listen(public, publics...)
		if err != nil {
			return nil, "", err
		}
		s.balancers = append(s.balancers, pb)
	}
	specs := make([]launch.Spec, n)
	for i := range specs {
		e := append(slices.Clip(env), fmt.Sprintf("PICOCLAW_SERVICES_%s_LISTEN=%s", launch.EnvKey(name), internal[i]))
		if public != "" {
			e = append(e, fmt.Sprintf("PICOCLAW_SERVICES_%s_PUBLIC_LISTEN=%s", launch.EnvKey(name), publics[i]))
		}
		e = append(e, fmt.Sprintf("PICOCLAW_REPLICA_ID=%s-%d", name, i+1))
		specs[i] = launch.Spec{Name: name, Env: e, Addr: internal[i]}
	}
	return specs, public, nil
}

// Restart starts a process that has ended again, with the same settings, its output appended
// to the same log.
func (s *Suite) Restart(ctx context.Context, p *Proc) error {
	select {
	case <-p.Done():
	default:
		return fmt.Errorf("%s (replica %d) is still running", p.Name, p.Replica)
	}
	lp, err := launch.Start(ctx, p.spec)
	if err != nil {
		return fmt.Errorf("%w (log %s)", err, p.log.Name())
	}
	p.Proc = lp
	return nil
}

// PublicURL is the base URL of the public listener.
func (p *Proc) PublicURL() string { return "http://" + p.PublicAddr }

// Memory reads the process's resident memory.
func (p *Proc) Memory() (Memory, error) { return ReadMemory(p.Pid()) }

// CPU is the process's user + system CPU time so far.
func (p *Proc) CPU() (time.Duration, error) { return ProcessCPU(p.Pid()) }

// ProcessCPU reads utime + stime of pid from /proc/<pid>/stat.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStatCPU(pid, b)
}

func parseStatCPU(pid int, b []byte) (time.Duration, error) {
	// The command name may contain spaces; the fields after its closing parenthesis are fixed.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	// utime and stime are fields 14 and 15 of stat (11 and 12 after the name), in clock ticks
	// of 1/100 s (USER_HZ on Linux).
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

func (p *Proc) stop() error {
	defer p.log.Close()
	return p.Stop(5 * time.Second)
}

// Stop ends the services in reverse start order, then their balancers.
func (s *Suite) Stop() error {
	var errs []error
	for i := len(s.order) - 1; i >= 0; i-- {
		p := s.order[i]
		if err := p.stop(); err != nil {
			errs = append(errs, fmt.Errorf("%s (replica %d): %w", p.Name, p.Replica, err))
		}
	}
	s.order = nil
	for _, b := range s.balancers {
		errs = append(errs, b.Close())
	}
	s.balancers = nil
	return errors.Join(errs...)
}

// LogTails returns the last n lines of every service's log, for a failing test to show.
func (s *Suite) LogTails(n int) string {
	var b strings.Builder
	for _, p := range s.order {
		data, err := os.ReadFile(p.log.Name())
		if err != nil {
			fmt.Fprintf(&b, "== %s: %v\n", p.log.Name(), err)
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		fmt.Fprintf(&b, "== %s (last %d lines)\n%s\n", filepath.Base(p.log.Name()), len(lines), strings.Join(lines, "\n"))
	}
	return b.String()
}

// Prepare builds the services from root into a temporary directory and isolates a schema and
// key prefix on the stores the environment names; done removes both (its error joins the
// caller's).
func Prepare(ctx context.Context, root, name string, logf func(string, ...any)) (bin string, iso *Isolation, done func() error, err error) {
	bin, err = os.MkdirTemp("", name+"-bin")
	if err != nil {
		return "", nil, nil, err
	}
	logf("building the services")
	if err := Build(ctx, root, bin); err != nil {
		_ = os.RemoveAll(bin)
		return "", nil, nil, err
	}
	dsn, redisAddr := Stores()
	iso, err = Isolate(ctx, dsn, redisAddr)
	if err != nil {
		_ = os.RemoveAll(bin)
		return "", nil, nil, err
	}
	return bin, iso, func() error {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		defer os.RemoveAll(bin)
		return iso.Close(cctx)
	}, nil
}
