// Package suite builds the suite's binaries and runs them as real processes against local fakes
// of the LINE Messaging API and Ollama, in a Postgres schema and a Redis key prefix of their own.
package suite

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// Services are the suite's eight binaries in start order: dependencies first, so each service
// is measured starting alone.
var Services = []string{
	"heartbeat", "approval", "executor", "coder-order", "router-shiro", "chat-mio", "gateway-line", "gateway-slack",
}

// Secrets and identities the fakes and the services share.
const (
	LineSecret = "bench-line-channel-secret-0123456789abcdef"
	LineToken  = "bench-line-access-token-0123456789abcdefgh"
	Approver   = "bench-approver"
)

// Build compiles every service of the repository at root into dir.
func Build(ctx context.Context, root, dir string) error {
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, s := range Services {
		args = append(args, "./services/"+s+"/cmd/"+s)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	return nil
}

// Root finds the repository root (the directory holding go.work) from dir upwards.
func Root(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("go.work not found above " + dir)
		}
	}
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
	// Env is appended last (overrides).
	Env []string
}

// Proc is one running service.
type Proc struct {
	Name, Addr string
	// PublicAddr is the public listener (webhooks, REST), "" for services without one.
	PublicAddr string
	// Ready is the time from process start to the first /readyz 200.
	Ready time.Duration
	cmd   *exec.Cmd
	done  chan error
	log   *os.File
}

// Suite is the running services.
type Suite struct {
	Procs map[string]*Proc
	order []string
}

func envKey(service string) string {
	return strings.ToUpper(strings.ReplaceAll(service, "-", "_"))
}

// Start launches the services one after another, each once the previous one is ready.
func Start(ctx context.Context, o Options) (*Suite, error) {
	public := []string{"gateway-line", "gateway-slack", "approval"}
	free, err := testinfra.FreeAddrs(len(Services) + len(public))
	if err != nil {
		return nil, err
	}
	addrs := map[string]string{}
	for i, s := range Services {
		addrs[s] = free[i]
	}
	// The webhooks and the REST API listen apart from the RPC ports.
	pubAddrs := map[string]string{}
	for i, s := range public {
		pubAddrs[s] = free[len(Services)+i]
	}
	workspace := filepath.Join(o.LogDir, "workspace")
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		return nil, err
	}
	env := append(os.Environ(),
		"PICOCLAW_POSTGRES_DSN="+o.Iso.DSN,
		"PICOCLAW_REDIS_ADDR="+o.Iso.RedisAddr,
		"PICOCLAW_REDIS_KEY_PREFIX="+o.Iso.RedisPrefix,
		"PICOCLAW_EXECUTOR_WORKSPACE="+workspace,
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
	for _, s := range Services {
		env = append(env,
			fmt.Sprintf("PICOCLAW_SERVICES_%s_LISTEN=%s", envKey(s), addrs[s]),
			fmt.Sprintf("PICOCLAW_SERVICES_%s_URL=http://%s", envKey(s), addrs[s]))
	}
	for s, a := range pubAddrs {
		env = append(env,
			fmt.Sprintf("PICOCLAW_SERVICES_%s_PUBLIC_LISTEN=%s", envKey(s), a),
			fmt.Sprintf("PICOCLAW_SERVICES_%s_PUBLIC_URL=http://%s", envKey(s), a))
	}
	env = append(env, o.Env...)
	st := &Suite{Procs: map[string]*Proc{}}
	for _, name := range Services {
		// Each process holds only its own key (the test fixtures' keys).
		p, err := startOne(ctx, o, name, addrs[name], append(slices.Clip(env), testinfra.AuthEnv(name)...))
		if err != nil {
			st.Stop()
			return nil, err
		}
		p.PublicAddr = pubAddrs[name]
		st.Procs[name] = p
		st.order = append(st.order, name)
	}
	return st, nil
}

func startOne(ctx context.Context, o Options, name, addr string, env []string) (*Proc, error) {
	logf, err := os.Create(filepath.Join(o.LogDir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(o.BinDir, name))
	cmd.Dir = o.Root // relative paths of the default config (rules, persona) resolve here
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	p := &Proc{Name: name, Addr: addr, cmd: cmd, done: make(chan error, 1), log: logf}
	client := &http.Client{Timeout: time.Second}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { p.done <- cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := client.Get("http://" + addr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				p.Ready = time.Since(start)
				return p, nil
			}
		}
		select {
		case err := <-p.done:
			p.done <- err
			return nil, fmt.Errorf("%s exited before ready: %v (log %s)", name, err, logf.Name())
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s not ready after 20s (log %s)", name, logf.Name())
		}
	}
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// URL is the service's base URL.
func (p *Proc) URL() string { return "http://" + p.Addr }

// PublicURL is the base URL of the public listener.
func (p *Proc) PublicURL() string { return "http://" + p.PublicAddr }

// Memory is a process's resident memory from /proc/<pid>/status, in bytes.
type Memory struct {
	// RSS is VmRSS; Anon and File split it into private memory (heap, stacks) and pages of
	// the mapped binary; Peak is VmHWM.
	RSS, Anon, File, Peak int64
}

// Memory reads the process's resident memory.
func (p *Proc) Memory() (Memory, error) {
	var m Memory
	f, err := os.Open("/proc/" + strconv.Itoa(p.Pid()) + "/status")
	if err != nil {
		return m, err
	}
	defer f.Close()
	fields := map[string]*int64{"VmRSS": &m.RSS, "RssAnon": &m.Anon, "RssFile": &m.File, "VmHWM": &m.Peak}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		dst, want := fields[k]
		if !ok || !want {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) != 2 || fs[1] != "kB" {
			return m, fmt.Errorf("%s: unexpected %s line %q", p.Name, k, v)
		}
		n, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil {
			return m, err
		}
		*dst = n * 1024
	}
	return m, sc.Err()
}

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
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		return err
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s: killed 5s after SIGTERM", p.Name)
	}
}

// Stop ends the services in reverse start order.
func (s *Suite) Stop() error {
	var errs []error
	for i := len(s.order) - 1; i >= 0; i-- {
		if err := s.Procs[s.order[i]].stop(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.order[i], err))
		}
	}
	s.order = nil
	return errors.Join(errs...)
}

// LogTails returns the last n lines of every service's log, for a failing test to show.
func (s *Suite) LogTails(n int) string {
	var b strings.Builder
	for _, name := range s.order {
		p := s.Procs[name]
		data, err := os.ReadFile(p.log.Name())
		if err != nil {
			fmt.Fprintf(&b, "== %s: %v\n", name, err)
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		fmt.Fprintf(&b, "== %s (last %d lines)\n%s\n", name, len(lines), strings.Join(lines, "\n"))
	}
	return b.String()
}
