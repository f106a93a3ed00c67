// Package channeltest is the test kit of the gateways built on the channel runtime: a running
// gateway with a fake chat-mio and its own Redis key prefix, the real binary started and killed,
// polling, and the open-loop rate benchmark.
package channeltest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink/chatlinktest"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// Gateway is a gateway running in the test's process.
type Gateway struct {
	// URL is the public listener (webhooks); Internal the internal one (notification API, metrics).
	URL, Internal string
	Chat          *chatlinktest.FakeChat
	// ChatURL is the fake chat-mio's address.
	ChatURL string
	Redis   testinfra.RedisDB
	Logs    *testinfra.SyncBuffer
	// Listener and PublicListener are handed to the service's Config.
	Listener, PublicListener net.Listener
	// Stream is the inbox stream, Outbox the outbox stream, Group their consumer group (the
	// service name).
	Stream, Outbox, Group string
}

// Start runs a gateway: run gets the prepared parts (listeners, Redis, fake chat-mio, log
// buffer) and calls the service's Run with a config made of them. The gateway is stopped at the
// end of the test, and must stop cleanly.
func Start(t testing.TB, channel, service string, run func(ctx context.Context, g *Gateway) error) *Gateway {
	t.Helper()
	r := testinfra.Redis(t)
	chat := chatlinktest.NewFakeChat()
	chatSrv := chatlinktest.Start(t, chat)
	ln, pub := testinfra.Listen(t), testinfra.Listen(t)
	g := &Gateway{URL: testinfra.URL(pub), Internal: testinfra.URL(ln), Chat: chat, ChatURL: chatSrv.URL,
		Redis: r, Logs: &testinfra.SyncBuffer{}, Listener: ln, PublicListener: pub,
		Stream: r.Prefix + "inbox:" + channel, Outbox: r.Prefix + "outbox:" + channel, Group: service}
	// Registered before Serve, so it runs after the gateway stopped.
	t.Cleanup(func() { close(chat.Release) })
	testinfra.Serve(t, service, g.URL+"/readyz", func(ctx context.Context) error { return run(ctx, g) })
	return g
}

// Configure points a gateway's configuration at the test's parts: the suite's credentials for
// service, the test's Redis key prefix, the fake chat-mio, the channel API at apiURL with users
// allowed, short inbox timings (consumer "test") and the listeners and log buffer.
func (g *Gateway) Configure(service string, common *config.Common, s *channel.Settings, w *channel.Wiring, apiURL string,
	users ...string) {
	common.Auth = testinfra.Auth(service)
	common.Redis.Addr = g.Redis.Addr
	common.Redis.KeyPrefix = g.Redis.Prefix
	common.Services.ChatMio.URL = g.ChatURL
	s.APIBaseURL = apiURL
	s.AllowedUsers = users
	s.ChatTimeout = 10 * time.Second
	s.Inbox.Consumer = "test"
	s.Inbox.Block = 100 * time.Millisecond
	s.Inbox.MaxAttempts = 3
	w.LogWriter = g.Logs
	w.Listener, w.PublicListener = g.Listener, g.PublicListener
}

// StreamLen is the number of entries in the inbox stream.
func (g *Gateway) StreamLen() int64 {
	return g.Redis.Client.XLen(context.Background(), g.Stream).Val()
}

// Pending is the work left: delivered, unacknowledged inbox entries plus the outbox's entries
// not yet sent (not delivered, or delivered and unacknowledged).
func (g *Gateway) Pending() int64 {
	return g.Redis.Client.XPending(context.Background(), g.Stream, g.Group).Val().Count + unsent(g.Redis, g.Outbox, g.Group)
}

// unsent is the number of entries of the outbox stream not yet sent and acknowledged.
func unsent(r testinfra.RedisDB, stream, group string) int64 {
	ctx := context.Background()
	groups, err := r.Client.XInfoGroups(ctx, stream).Result()
	if err != nil {
		if n := r.Client.XLen(ctx, stream).Val(); n > 0 {
			return n // entries but no group yet
		}
		return 0
	}
	for _, g := range groups {
		if g.Name == group {
			return g.Lag + g.Pending
		}
	}
	return r.Client.XLen(ctx, stream).Val()
}

// WaitFor polls cond for up to 15 s.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testinfra.Eventually(t, 15*time.Second, what, cond)
}

// BuildBinary builds the command ./cmd/<name> of the module in moduleDir.
func BuildBinary(t testing.TB, moduleDir, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	build := exec.Command("go", "build", "-o", bin, "./cmd/"+name)
	build.Dir = moduleDir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// Binary is a gateway binary under test with what it runs against: a fake chat-mio, the test's
// Redis key prefix and two free listen addresses.
type Binary struct {
	Path  string
	Redis testinfra.RedisDB
	Chat  *chatlinktest.FakeChat
	// Addr is the public listener (webhooks); the internal one only serves the suite.
	Addr string
	// Env is BinaryEnv with both listen addresses, then the extra variables.
	Env              []string
	channel, service string
}

// PrepareBinary builds ./cmd/<service> of the module in moduleDir for the gateway of channel
// and prepares its environment (see Binary); extra comes last.
func PrepareBinary(t testing.TB, moduleDir, channel, service string, extra ...string) *Binary {
	t.Helper()
	b := &Binary{Redis: testinfra.Redis(t), Path: BuildBinary(t, moduleDir, service), Chat: chatlinktest.NewFakeChat(),
		channel: channel, service: service}
	chatSrv := chatlinktest.Start(t, b.Chat)
	addrs, err := testinfra.FreeAddrs(2)
	if err != nil {
		t.Fatal(err)
	}
	b.Addr = addrs[0]
	section := "PICOCLAW_SERVICES_" + strings.ToUpper(strings.ReplaceAll(service, "-", "_"))
	b.Env = append(BinaryEnv(service, chatSrv.URL, b.Redis, section+"_PUBLIC_LISTEN="+addrs[0], section+"_LISTEN="+addrs[1]), extra...)
	return b
}

// Start starts the binary with its environment and env (see StartBinary).
func (b *Binary) Start(t testing.TB, env ...string) *exec.Cmd {
	t.Helper()
	return StartBinary(t, b.Path, append(slices.Clip(b.Env), env...), b.Addr)
}

// WaitSettled waits until answered holds, the inbox has no unacknowledged entry and the outbox
// nothing left to send.
func (b *Binary) WaitSettled(t testing.TB, what string, answered func() bool) {
	t.Helper()
	stream := b.Redis.Prefix + "inbox:" + b.channel
	WaitFor(t, what, func() bool {
		return answered() && b.Redis.Client.XPending(context.Background(), stream, b.service).Val().Count == 0 &&
			unsent(b.Redis, b.Redis.Prefix+"outbox:"+b.channel, b.service) == 0
	})
}

// StartBinary starts bin with env and waits until its public listener addr is ready. It is
// stopped with SIGTERM at the end of the test unless the test killed it; its log is shown when
// the test failed.
func StartBinary(t testing.TB, bin string, env []string, addr string) *exec.Cmd {
	t.Helper()
	logs := &testinfra.SyncBuffer{}
	cmd := exec.Command(bin)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}
		if t.Failed() {
			t.Logf("gateway log:\n%s", logs.String())
		}
	})
	testinfra.WaitReady(t, "http://"+addr, 15*time.Second)
	return cmd
}

// Kill ends cmd with SIGKILL, as a crash would.
func Kill(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// AtRate calls send(i) for i in 0..b.N at rate calls per second, open loop (a call is not held
// back by the previous one), and reports the latency percentiles p50_ms, p99_ms and max_ms.
// A failed call fails the benchmark.
func AtRate(b *testing.B, rate int, send func(i int) error) {
	lat := make([]time.Duration, b.N)
	var failed sync.Map
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	b.ResetTimer()
	for i := range b.N {
		<-tick.C
		wg.Go(func() {
			t0 := time.Now()
			err := send(i)
			lat[i] = time.Since(t0)
			if err != nil {
				failed.Store(i, err.Error())
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	failed.Range(func(k, v any) bool {
		b.Fatalf("request %v: %v", k, v)
		return false
	})
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max_ms")
}

// Status turns a non-200 answer into an error (for AtRate).
func Status(code int, err error) error {
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("status %d", code)
	}
	return nil
}

// BinaryEnv is the environment of a gateway binary under test: the suite's credentials for
// service, the fake chat-mio and the test's Redis key prefix, then extra.
func BinaryEnv(service, chatURL string, r testinfra.RedisDB, extra ...string) []string {
	env := append(append(os.Environ(), testinfra.AuthEnv(service)...),
		"PICOCLAW_SERVICES_CHAT_MIO_URL="+chatURL,
		"PICOCLAW_REDIS_ADDR="+r.Addr,
		"PICOCLAW_REDIS_KEY_PREFIX="+r.Prefix,
	)
	return append(env, extra...)
}

// WaitStarted waits until chat-mio has received n distinct events.
func WaitStarted(t testing.TB, chat *chatlinktest.FakeChat, n int) {
	t.Helper()
	seen := map[string]bool{}
	for len(seen) < n {
		select {
		case id := <-chat.Started:
			seen[id] = true
		case <-time.After(15 * time.Second):
			t.Fatalf("processing did not start: %v", seen)
		}
	}
}

// AssertClean fails when the fake API of the channel (named api) saw requests breaking its
// rules, or when one of secrets reached the log.
func AssertClean(t testing.TB, api string, problems []string, logs string, secrets ...string) {
	t.Helper()
	if len(problems) > 0 {
		t.Errorf("%s API rule violations: %v", api, problems)
	}
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Error("a secret appeared in the log")
		}
	}
}

// ConfigCase is a configuration that Validate must refuse, naming Key.
type ConfigCase[C any] struct {
	Name   string
	Mutate func(*C)
	Key    string
}

// CheckValidate runs cases: valid() must pass validate, and each case's change must fail it
// with an error naming the case's key.
func CheckValidate[C any](t *testing.T, valid func() C, validate func(*C) error, cases []ConfigCase[C]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			cfg := valid()
			if err := validate(&cfg); err != nil {
				t.Fatalf("valid configuration: %v", err)
			}
			tc.Mutate(&cfg)
			if err := validate(&cfg); err == nil || !strings.Contains(err.Error(), tc.Key) {
				t.Fatalf("error %v does not name %s", err, tc.Key)
			}
		})
	}
}

// CheckPushOnce pushes a notification twice, over Connect and over gRPC, with one retry key per
// protocol (result-connect, result-grpc) to session(protocol): each push answers delivered=1
// (stored in the outbox) and, once settled holds (the outbox sent everything),
// delivered(protocol) must count one delivery. A push to foreign, another channel's session, is
// refused as an invalid argument.
func CheckPushOnce(t *testing.T, internalURL, service string, session func(protocol string) string, foreign string,
	delivered func(protocol string) int, settled func() bool) {
	t.Helper()
	clients := map[string]gatewayv1connect.NotificationServiceClient{
		"connect": gatewayv1connect.NewNotificationServiceClient(rpcserver.NewHTTPClient(), internalURL, testinfra.AsSuite(t, service)),
		"grpc": gatewayv1connect.NewNotificationServiceClient(rpcserver.NewHTTPClient(), internalURL, connect.WithGRPC(),
			testinfra.AsSuite(t, service)),
	}
	for name, c := range clients {
		t.Run(name, func(t *testing.T) {
			req := &gatewayv1.PushRequest{SessionId: session(name), JobId: "job_20261121_009", RetryKey: "result-" + name,
				Messages: []*commonv1.ReplyMessage{{Text: "job_20261121_009 の結果: 完了"}}}
			for range 2 {
				res, err := c.Push(context.Background(), req)
				if err != nil || res.GetDelivered() != 1 {
					t.Fatalf("push: %v, %v", res, err)
				}
			}
			WaitFor(t, "the push sent", func() bool { return delivered(name) > 0 && settled() })
			if n := delivered(name); n != 1 {
				t.Fatalf("delivered %d times", n)
			}
			_, err := c.Push(context.Background(), &gatewayv1.PushRequest{SessionId: foreign,
				Messages: []*commonv1.ReplyMessage{{Text: "x"}}})
			if connect.CodeOf(err) != connect.CodeInvalidArgument {
				t.Fatalf("foreign session: %v", err)
			}
		})
	}
}

// ExampleConfig describes a gateway's section of the suite's example configuration file.
type ExampleConfig[C any] struct {
	// Path is the example file.
	Path     string
	Default  func() C
	Validate func(*C) error
	// Section is the channel's section (compared with the defaults); Settings its common part.
	Section  func(*C) any
	Settings func(*C) *channel.Settings
	// Env is the environment applied after the file (the secrets among it); Applied reports
	// whether it reached the configuration.
	Env     map[string]string
	Applied func(*C) bool
	// Secrets must not show when the section is printed.
	Secrets []string
}

// CheckExampleConfig: the example file parses into the service's config and shows the
// defaults; secrets come from the environment only and are never printed.
func CheckExampleConfig[C any](t *testing.T, e ExampleConfig[C]) {
	t.Helper()
	data, err := os.ReadFile(e.Path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, def := e.Default(), e.Default()
	if err := config.Decode(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if s := e.Settings(&cfg); len(s.AllowedUsers) == 0 {
		s.AllowedUsers = nil // "[]" in the file
	}
	if !reflect.DeepEqual(e.Section(&cfg), e.Section(&def)) {
		t.Fatalf("example section %+v differs from the defaults %+v", e.Section(&cfg), e.Section(&def))
	}
	if err := config.ApplyEnv(&cfg, func(k string) (string, bool) { v, ok := e.Env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if err := e.Validate(&cfg); err != nil {
		t.Fatal(err)
	}
	if !e.Applied(&cfg) {
		t.Fatalf("environment not applied: %+v", e.Section(&cfg))
	}
	printed := fmt.Sprintf("%v %+v", e.Section(&cfg), e.Section(&cfg))
	for _, s := range e.Secrets {
		if strings.Contains(printed, s) {
			t.Fatal("secret printed")
		}
	}
}

// PostAtRate prepares b.N request bodies with body, then sends them through post at rate per
// second (open loop, see AtRate); post answers the HTTP status.
func PostAtRate(b *testing.B, rate int, body func(i int) []byte, post func(c *http.Client, body []byte) (int, error)) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = body(i)
	}
	AtRate(b, rate, func(i int) error { return Status(post(client, bodies[i])) })
}
