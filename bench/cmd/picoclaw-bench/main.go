// Command picoclaw-bench starts the suite's real binaries against a fake LINE Messaging API and a
// zero-latency fake Ollama, measures the SPEC performance goals in one run and writes
// report.json and report.md.
//
// Usage: picoclaw-bench [-out bench/results] [-rate 500] [-webhook 10s] [-chat 300] [-sustain 10s] [-approvals 300]
//
// With -embedded it measures the embedded suite (`picoclaw run --chat off`, every service in
// one process on SQLite) instead and writes embedded.json and embedded.md:
//
//	picoclaw-bench -embedded [-embedded-messages 10000] [-embedded-users 256] [-embedded-inflight 32] [-embedded-runs 5]
//
// With -faults it sends LINE messages while every service in turn is killed (SIGKILL) and
// stopped (SIGTERM) and restarted, Redis and Postgres are paused and their connections dropped
// and the LINE API is down, and counts lost, repeated, reordered and error answers; it writes
// faults.json and faults.md and fails when any is not zero:
//
//	picoclaw-bench -faults [-faults-messages 2000] [-faults-chats 100] [-faults-pause 60s] [-replicas 1]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/idlemem"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"

	"github.com/picoclaw-suite/picoclaw/bench/internal/report"
	"github.com/picoclaw-suite/picoclaw/bench/internal/stats"
	"github.com/picoclaw-suite/picoclaw/bench/internal/suite"
)

type options struct {
	out       string
	rate      float64
	webhook   time.Duration
	chat      int
	sustain   time.Duration
	inFlight  int
	approvals int
	users     int
	extraEnv  string
	chatModel string
	// modelLatency and slowChat configure the phase with a model of fixed latency.
	modelLatency time.Duration
	slowChat     int
	workerName   string
	profile      bool
	embedded     embeddedOptions
	faults       faultOptions
	compare      compareOptions
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", "bench/results", "directory for report.json, report.md and the service logs")
	flag.Float64Var(&o.rate, "rate", report.WebhookRateGoal, "webhook requests per second in the ack-latency phase")
	flag.DurationVar(&o.webhook, "webhook", 10*time.Second, "length of the fixed-rate webhook phase")
	flag.IntVar(&o.chat, "chat", 300, "CHAT round trips measured one at a time")
	flag.DurationVar(&o.modelLatency, "model-latency", 500*time.Millisecond, "latency of every model call in the slow-model CHAT phase")
	flag.IntVar(&o.slowChat, "slow-chat", 20, "CHAT round trips measured with the slow model (0: skip the phase)")
	flag.DurationVar(&o.sustain, "sustain", 10*time.Second, "length of the sustained-throughput phase")
	flag.IntVar(&o.inFlight, "inflight", 128, "messages in flight in the sustained phase")
	flag.IntVar(&o.approvals, "approvals", 300, "jobs approved and claimed")
	flag.IntVar(&o.users, "users", 512, "LINE users on the allowlist (chats run in parallel across users)")
	flag.StringVar(&o.extraEnv, "env", "", "extra KEY=VALUE settings for every service, comma separated")
	flag.BoolVar(&o.profile, "profile", false, "enable debug.pprof and save CPU profiles of the sustained phase and idle heap profiles under <out>/profiles")
	o.embedded.flags()
	o.faults.flags()
	o.compare.flags()
	flag.Parse()
	o.chatModel, o.workerName = "chat-v1:latest", "worker-v1:latest"

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	mode := run
	switch {
	case o.compare.ref != "":
		mode = runCompare
	case o.embedded.on:
		mode = runEmbedded
	case o.faults.on:
		mode = runFaults
	}
	if err := mode(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "picoclaw-bench:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}

// setup finds the repository root, makes o.out absolute and starts the report.
func setup(o *options) (root string, rep *report.Report, err error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", nil, err
	}
	if root, err = suite.Root(wd); err != nil {
		return "", nil, err
	}
	if !filepath.IsAbs(o.out) {
		o.out = filepath.Join(root, o.out)
	}
	return root, newReport(root), nil
}

// newReport starts the report of a run of the tree at root.
func newReport(root string) *report.Report {
	rep := &report.Report{StartedAt: time.Now()}
	rep.Host = report.Host{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadAvgBefore: loadAvg(), Commit: suite.GitCommit(root)}
	return rep
}

// lineUsers are n LINE user ids for the allowlist.
func lineUsers(n int) []string {
	users := make([]string, n)
	for i := range users {
		users[i] = fmt.Sprintf("Ubench%027d", i)
	}
	return users
}

// extraEnv is -env as a list, with debug.pprof on for -profile.
func extraEnv(o options) []string {
	env := splitEnv(o.extraEnv)
	if o.profile {
		env = append(env, "PICOCLAW_DEBUG_PPROF=true")
	}
	return env
}

// splitEnv is a comma-separated list of KEY=VALUE settings as a list (nil when empty).
func splitEnv(list string) []string {
	if list == "" {
		return nil
	}
	return strings.Split(list, ",")
}

// finish completes the report, writes name.json and name.md to o.out and prints the Markdown.
func finish(rep *report.Report, o options, name string) error {
	complete(rep)
	return publish(o.out, name, rep, rep.Markdown)
}

// complete closes a run's report: the load after it, its length, each goal judged and explained.
func complete(rep *report.Report) {
	rep.Host.LoadAvgAfter = loadAvg()
	rep.DurationSec = time.Since(rep.StartedAt).Round(time.Second).Seconds()
	rep.Evaluate()
	rep.Explain()
}

// publish writes v as name.json and markdown's text as name.md to dir, and prints the Markdown.
func publish(dir, name string, v any, markdown func(io.Writer)) error {
	if err := report.WriteFiles(dir, name, v, markdown); err != nil {
		return err
	}
	markdown(os.Stdout)
	logf("report written to %s", filepath.Join(dir, name+".{json,md}"))
	return nil
}

func run(ctx context.Context, o options) error {
	root, rep, err := setup(&o)
	if err != nil {
		return err
	}
	if err := measureServices(ctx, o, root, rep); err != nil {
		return err
	}
	return finish(rep, o, "report")
}

// measureServices builds the separate services from the tree at root, starts them and measures
// every phase into rep; the logs (and profiles) go under o.out.
func measureServices(ctx context.Context, o options, root string, rep *report.Report) (err error) {
	logDir := filepath.Join(o.out, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}

	bin, iso, done, err := suite.Prepare(ctx, root, "picoclaw-bench", logf)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, done()) }()

	line := suite.NewLineAPI()
	defer line.Close()
	var modelLatency atomic.Int64
	ollama := suite.NewOllama(&modelLatency, o.chatModel, o.workerName)
	defer ollama.Close()
	users := lineUsers(o.users)
	caEnv, err := line.CAEnv(logDir)
	if err != nil {
		return err
	}
	env := append(caEnv, extraEnv(o)...)
	logf("starting the suite (schema %s)", iso.Schema)
	s, err := suite.Start(ctx, suite.Options{Root: root, BinDir: bin, LogDir: logDir, Iso: iso,
		LineAPI: line.URL, Ollama: ollama.URL, LineUsers: users, Env: env})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Stop()) }()

	svc := map[string]*report.Service{}
	for _, name := range suite.Services {
		svc[name] = &report.Service{Name: name, ReadyMS: ms(s.Procs[name].Ready)}
		// The binary as built for this run: stripped, -tags serveronly (suite.Build).
		fi, err := os.Stat(filepath.Join(bin, name))
		if err != nil {
			return err
		}
		svc[name].BinaryBytes = fi.Size()
	}
	// Idle: every service started, nothing sent yet; let the start settle first (each service
	// hands back what only its start needed a few seconds after it: pkg/idlemem).
	time.Sleep(idlemem.DefaultFirst + 3*time.Second)
	for _, name := range suite.Services {
		m, err := s.Procs[name].Memory()
		if err != nil {
			return err
		}
		svc[name].IdleRSSMB, svc[name].IdleAnonMB, svc[name].IdleFileMB = mb(m.RSS), mb(m.Anon), mb(m.File)
	}
	profiles := filepath.Join(o.out, "profiles")
	if o.profile {
		for _, name := range suite.Services {
			if err := fetch(ctx, s.Procs[name].URL()+"/debug/pprof/heap", filepath.Join(profiles, name+".idle.heap.pprof")); err != nil {
				return err
			}
		}
	}

	// At most 64 connections, as the gateway's public listener allows one client address (more are
	// closed at once, against a host holding every slot); more requests wait for one, as a
	// webhook sender's keep-alive pool does.
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64, IdleConnTimeout: time.Minute}}
	hook := suite.Webhook{URL: s.Procs["gateway-line"].PublicURL() + "/line/webhook", Client: client}
	b := &bench{line: line, hook: hook, users: users}

	sampler := newRSSSampler(s)
	sctx, stopSampling := context.WithCancel(ctx)
	var swg sync.WaitGroup
	swg.Go(func() { sampler.run(sctx) })
	defer func() {
		stopSampling()
		swg.Wait()
	}()

	logf("baseline round trips")
	if rep.Baseline, err = baseline(ctx, iso, o.rate); err != nil {
		return err
	}
	logf("warm-up")
	if _, errs := b.chatRoundTrips(ctx, 50); errs > 0 {
		return fmt.Errorf("warm-up: %d of 50 messages got no reply (logs in %s)", errs, logDir)
	}
	logf("CHAT overhead: %d round trips one at a time", o.chat)
	lat, errs := b.chatRoundTrips(ctx, o.chat)
	rep.ChatOverhead = report.ChatOverhead{Latency: stats.Summarize(lat), Errors: errs}

	if o.slowChat > 0 {
		// With a real model every inference is slow: what counts is how many a message waits for.
		logf("CHAT with a model that takes %s per call: %d round trips one at a time", o.modelLatency, o.slowChat)
		before := ollama.Calls()
		modelLatency.Store(int64(o.modelLatency))
		slow, errs := b.chatRoundTrips(ctx, o.slowChat)
		modelLatency.Store(0)
		s := stats.Summarize(slow)
		rep.Notes = append(rep.Notes, fmt.Sprintf("CHAT webhook → reply with a model that takes %s per call: p50 %.0f ms, p90 %.0f ms over %d messages (%d errors), %.2f model calls per message.",
			o.modelLatency, s.P50, s.P90, o.slowChat, errs, float64(ollama.Calls()-before)/float64(o.slowChat)))
	}

	logf("webhook ack at %.0f req/s for %s", o.rate, o.webhook)
	rep.Webhook = b.fixedRate(ctx, o.rate, o.webhook, b.message)
	b.drain(ctx, 60*time.Second)
	logf("webhook ack at %.0f req/s for %s, ack path only", o.rate, o.webhook/2)
	ackOnly := b.fixedRate(ctx, o.rate, o.webhook/2, b.unfollow)
	rep.Webhook.AckOnly = &ackOnly

	logf("sustained throughput for %s with %d in flight", o.sustain, o.inFlight)
	var pwg sync.WaitGroup
	if o.profile {
		secs := max(1, int(o.sustain.Seconds())-2)
		for _, name := range []string{"gateway-line", "chat-mio", "router-shiro", "heartbeat"} {
			pwg.Go(func() {
				url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", s.Procs[name].URL(), secs)
				if err := fetch(ctx, url, filepath.Join(profiles, name+".sustained.cpu.pprof")); err != nil {
					logf("profile %s: %v", name, err)
				}
			})
		}
		// The load tool and its fakes, over the same window.
		pwg.Go(func() {
			if err := profileSelf(ctx, filepath.Join(profiles, "load-tool.sustained.cpu.pprof"), time.Duration(secs)*time.Second); err != nil {
				logf("profile the load tool: %v", err)
			}
		})
	}
	// Redis serves the suite alone during the run: its CPU is the suite's too, when it runs here.
	redisPID, rerr := suite.ListenerPID(iso.RedisAddr)
	if rerr != nil {
		logf("Redis's CPU is not counted: %v", rerr)
	}
	cpu0, err := cpuTimes(s, redisPID)
	if err != nil {
		return err
	}
	rep.Throughput = b.sustained(ctx, o.sustain, o.inFlight)
	cpu1, err := cpuTimes(s, redisPID)
	if err != nil {
		return err
	}
	pwg.Wait()
	if n := float64(rep.Throughput.Answered); n > 0 {
		var total time.Duration
		for _, name := range suite.Services {
			d := cpu1[name] - cpu0[name]
			total += d
			svc[name].CPUPerMsgMS = ms(d) / n
		}
		rep.Throughput.CPUPerMsgMS = ms(total) / n
		rep.Throughput.ToolCPUPerMsgMS = ms(cpu1[""]-cpu0[""]) / n
		if r1, ok := cpu1[redisKey]; ok {
			rep.Throughput.RedisCPUPerMsgMS = ms(r1-cpu0[redisKey]) / n
		}
		if rep.Throughput.CPUPerMsgMS > 0 {
			rep.Throughput.CeilingMsgPerSec = float64(runtime.NumCPU()) * 1000 /
				(rep.Throughput.CPUPerMsgMS + rep.Throughput.RedisCPUPerMsgMS + rep.Throughput.ToolCPUPerMsgMS)
		}
	}
	b.drain(ctx, 60*time.Second)

	logf("approve + claim: %d jobs", o.approvals)
	if o.profile {
		pwg.Go(func() {
			url := s.Procs["approval"].URL() + "/debug/pprof/profile?seconds=3"
			if err := fetch(ctx, url, filepath.Join(profiles, "approval.approve.cpu.pprof")); err != nil {
				logf("profile approval: %v", err)
			}
		})
	}
	appr, err := approvals(ctx, s.Procs["approval"].URL(), o.approvals)
	pwg.Wait()
	if err != nil {
		return err
	}
	rep.Approval = appr
	stopSampling()
	swg.Wait()

	for _, name := range suite.Services {
		m, err := s.Procs[name].Memory()
		if err != nil {
			return err
		}
		svc[name].LoadRSSMB = mb(sampler.max[name])
		svc[name].PeakRSSMB = mb(m.Peak)
		rep.Services = append(rep.Services, *svc[name])
	}
	if n := line.Pushes.Load(); n > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d answers went out as pushes (reply token too old)", n))
	}
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("Fake Ollama answered %d model calls for %d messages sent (plain chat: the chat model only; the router decides it by cheap signals).", ollama.Calls(), b.seq.Load()),
		"Every service logs JSON at level info to a file, as in production; traces are not exported.",
		"The load generator, the fakes, Postgres and Redis share the same CPUs with the services.")
	return nil
}

type bench struct {
	line  *suite.LineAPI
	hook  suite.Webhook
	users []string
	seq   atomic.Int64
	// silent counts events sent that get no answer.
	silent atomic.Int64
}

// message prepares one signed text event with a fresh event id and reply token.
func (b *bench) message(user string) (token string, body []byte, sig string) {
	n := b.seq.Add(1)
	token = fmt.Sprintf("bench-reply-%010d", n)
	body = suite.TextEvent(fmt.Sprintf("01BENCH%019d", n), user, token, "今日はいい天気だね、散歩に行こうかな", time.Now())
	return token, body, suite.Sign(body)
}

// unfollow prepares one signed unfollow event: stored and consumed like any event, but answered
// with nothing.
func (b *bench) unfollow(user string) (token string, body []byte, sig string) {
	n := b.seq.Add(1)
	b.silent.Add(1)
	body, _ = json.Marshal(map[string]any{"destination": "U0123456789abcdef0123456789abcdef", "events": []any{map[string]any{
		"type": "unfollow", "mode": "active", "timestamp": time.Now().UnixMilli(), "webhookEventId": fmt.Sprintf("01BENCH%019d", n),
		"deliveryContext": map[string]any{"isRedelivery": false}, "source": map[string]any{"type": "user", "userId": user},
	}}})
	return "", body, suite.Sign(body)
}

// chatRoundTrips sends n messages one at a time and measures webhook request → reply at the
// fake LINE API.
func (b *bench) chatRoundTrips(ctx context.Context, n int) ([]time.Duration, int) {
	var lat []time.Duration
	errs := 0
	for i := range n {
		tok, body, sig := b.message(b.users[i%len(b.users)])
		wait := b.line.Await(tok)
		start := time.Now()
		if code, err := b.hook.Post(body, sig); err != nil || code != http.StatusOK {
			b.line.Forget(tok)
			errs++
			continue
		}
		select {
		case r := <-wait:
			lat = append(lat, r.At.Sub(start))
		case <-time.After(10 * time.Second):
			b.line.Forget(tok)
			errs++
		case <-ctx.Done():
			return lat, errs
		}
	}
	return lat, errs
}

// fixedRate sends webhook requests on a fixed schedule (open loop) and measures each ack.
func (b *bench) fixedRate(ctx context.Context, rate float64, d time.Duration,
	event func(user string) (string, []byte, string)) report.Webhook {
	total := int(rate * d.Seconds())
	interval := time.Duration(float64(time.Second) / rate)
	lat := make([]time.Duration, total)
	var errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	sent := 0
	for i := 0; i < total && ctx.Err() == nil; i++ {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		_, body, sig := event(user(b.users, i))
		sent++
		wg.Go(func() {
			t0 := time.Now()
			code, err := b.hook.Post(body, sig)
			lat[i] = time.Since(t0)
			if err != nil || code != http.StatusOK {
				errs.Add(1)
			}
		})
	}
	elapsed := time.Since(start)
	wg.Wait()
	return report.Webhook{RateRPS: rate, AchievedRPS: float64(sent) / elapsed.Seconds(), Sent: sent,
		Errors: int(errs.Load()), Latency: stats.Summarize(lat[:sent])}
}

// sustained keeps inFlight messages outstanding (a new one is sent when an answer arrives) and
// counts answers within the window.
func (b *bench) sustained(ctx context.Context, window time.Duration, inFlight int) report.Throughput {
	// Connections the earlier phases left idle are not reused: the server may have closed them
	// meanwhile, and a webhook POST is not retried on a stale connection.
	b.hook.Client.CloseIdleConnections()
	// The gateway counts a connection against the client's cap until it has read the close; new
	// connections opened before that are refused (a POST on one fails with EOF).
	time.Sleep(200 * time.Millisecond)
	slots := make(chan struct{}, inFlight)
	var answered, errs atomic.Int64
	var wg sync.WaitGroup
	wctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	start := time.Now()
	for i := 0; wctx.Err() == nil; i++ {
		select {
		case slots <- struct{}{}:
		case <-wctx.Done():
			continue
		}
		tok, body, sig := b.message(b.users[i%len(b.users)])
		wait := b.line.Await(tok)
		wg.Go(func() {
			defer func() { <-slots }()
			if code, err := b.hook.Post(body, sig); err != nil || code != http.StatusOK {
				b.line.Forget(tok)
				if errs.Add(1) <= 3 {
					logf("sustained: webhook POST: status %d, %v", code, err)
				}
				return
			}
			select {
			case <-wait:
				if wctx.Err() == nil {
					answered.Add(1)
				}
			case <-time.After(30 * time.Second):
				b.line.Forget(tok)
				if errs.Add(1) <= 3 {
					logf("sustained: no answer within 30 s")
				}
			}
		})
	}
	elapsed := time.Since(start)
	wg.Wait()
	return report.Throughput{Window: elapsed.Seconds(), InFlight: inFlight, Answered: int(answered.Load()),
		MsgPerSec: float64(answered.Load()) / elapsed.Seconds(), Errors: int(errs.Load())}
}

// drain waits until every message sent so far has been answered (reply or push).
func (b *bench) drain(ctx context.Context, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if b.line.Replies.Load()+b.line.Pushes.Load() >= b.seq.Load()-b.silent.Load() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	logf("drain: %d of %d answered after %s", b.line.Replies.Load()+b.line.Pushes.Load(), b.seq.Load()-b.silent.Load(), limit)
}

// approvals requests n jobs (pending), then approves and claims each one at a time.
func approvals(ctx context.Context, url string, n int) (report.Approval, error) {
	as, err := testinfra.SuiteCaller(svcauth.Approval)
	if err != nil {
		return report.Approval{}, err
	}
	c := approvalv1connect.NewApprovalServiceClient(&http.Client{}, url, as)
	actor := &commonv1.Actor{Id: suite.Approver, Channel: "cli"}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("job_20260301_%08x", i+1)
		res, err := c.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{Proposal: &commonv1.Proposal{
			JobId: ids[i], Plan: "update the docs",
			Patch: fmt.Sprintf(`[{"type":"file_edit","action":"update","target":"docs/page-%d.md","content":"text"}]`, i),
		}, Route: commonv1.Route_ROUTE_CODE, Channel: "cli", RequestedBy: actor})
		if err != nil {
			return report.Approval{}, fmt.Errorf("request approval: %w", err)
		}
		if res.GetOutcome() != approvalv1.Outcome_OUTCOME_PENDING {
			return report.Approval{}, fmt.Errorf("request approval: outcome %v", res.GetOutcome())
		}
	}
	var approve, claim, both []time.Duration
	for _, id := range ids {
		t0 := time.Now()
		if _, err := c.Approve(ctx, &approvalv1.ApproveRequest{JobId: id, Actor: actor}); err != nil {
			return report.Approval{}, fmt.Errorf("approve %s: %w", id, err)
		}
		t1 := time.Now()
		if _, err := c.ClaimJob(ctx, &approvalv1.ClaimJobRequest{JobId: id, ExecutorId: "bench"}); err != nil {
			return report.Approval{}, fmt.Errorf("claim %s: %w", id, err)
		}
		t2 := time.Now()
		approve, claim, both = append(approve, t1.Sub(t0)), append(claim, t2.Sub(t1)), append(both, t2.Sub(t0))
	}
	return report.Approval{Jobs: n, Approve: stats.Summarize(approve), Claim: stats.Summarize(claim), ApproveClaim: stats.Summarize(both)}, nil
}

// rssSampler records the largest VmRSS of every service while the load runs.
type rssSampler struct {
	s   *suite.Suite
	mu  sync.Mutex
	max map[string]int64
}

func newRSSSampler(s *suite.Suite) *rssSampler {
	return &rssSampler{s: s, max: map[string]int64{}}
}

func (r *rssSampler) run(ctx context.Context) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		for name, p := range r.s.Procs {
			if m, err := p.Memory(); err == nil {
				r.mu.Lock()
				r.max[name] = max(r.max[name], m.RSS)
				r.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// baseline measures round trips that do no work: a no-op HTTP handler at the webhook rate, and
// Redis and Postgres pings.
func baseline(ctx context.Context, iso *suite.Isolation, rate float64) (report.Baseline, error) {
	noop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer noop.Close()
	b := &bench{hook: suite.Webhook{URL: noop.URL, Client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}}}
	body := suite.TextEvent("noop", "Unoop", "noop", "noop", time.Now())
	w := b.fixedRate(ctx, rate, 2*time.Second, func(string) (string, []byte, string) { return "", body, "" })
	r, p, err := iso.Ping(ctx, 300)
	if err != nil {
		return report.Baseline{}, err
	}
	return report.Baseline{NoopHTTP: w.Latency, RedisPing: stats.Summarize(r), PostgresSelect1: stats.Summarize(p)}, nil
}

// profileSelf writes a CPU profile of this process over d to path.
func profileSelf(ctx context.Context, path string, d time.Duration) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	pprof.StopCPUProfile()
	return f.Close()
}

// fetch saves the body of url (a pprof endpoint) to path.
func fetch(ctx context.Context, url, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, res.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, res.Body)
	return errors.Join(err, f.Close())
}

// cpuTimes reads the CPU time of every service and (under "") of this process.
// redisKey holds Redis's CPU in cpuTimes.
const redisKey = "redis"

// cpuTimes reads the CPU time so far of every service, of this process (key "") and, with
// redisPID > 0, of Redis (redisKey).
func cpuTimes(s *suite.Suite, redisPID int) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for name, p := range s.Procs {
		d, err := p.CPU()
		if err != nil {
			return nil, err
		}
		out[name] = d
	}
	d, err := suite.ProcessCPU(os.Getpid())
	if err != nil {
		return nil, err
	}
	out[""] = d
	if redisPID > 0 {
		if d, err := suite.ProcessCPU(redisPID); err == nil {
			out[redisKey] = d
		}
	}
	return out, nil
}

func user(users []string, i int) string {
	if len(users) == 0 {
		return ""
	}
	return users[i%len(users)]
}

func loadAvg() [3]float64 {
	var out [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return out
	}
	for i, f := range strings.Fields(string(b)) {
		if i >= 3 {
			break
		}
		out[i], _ = strconv.ParseFloat(f, 64)
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mb(b int64) float64         { return float64(b) / (1 << 20) }
