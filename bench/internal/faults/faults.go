// Package faults is the load tool's fault run: the suite's real binaries on Postgres and Redis
// carry LINE messages over many chats while every service in turn is killed (SIGKILL) and
// stopped (SIGTERM) and restarted, Redis and Postgres are paused and their connections dropped
// (through faultproxy, so the shared servers are not touched), and the LINE Messaging API is
// down. It then counts what reached the fake LINE API: every message answered exactly once, in
// its chat's order, with no error reply.
package faults

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"

	"github.com/picoclaw-suite/picoclaw/bench/internal/faultproxy"
	"github.com/picoclaw-suite/picoclaw/bench/internal/stats"
	"github.com/picoclaw-suite/picoclaw/bench/internal/suite"
)

// Options configure a fault run.
type Options struct {
	// Root is the repository; LogDir receives the services' logs.
	Root, LogDir string
	// BinDir and Iso, when both set, are the built services and the stores to run on (a
	// test's own); otherwise Run builds the services and isolates a schema and key prefix on
	// the stores suite.Stores names.
	BinDir string
	Iso    *suite.Isolation
	// Messages are sent over Chats LINE chats, at a rate that spreads them over the faults.
	Messages, Chats int
	// Pause is how long Redis and Postgres are paused and the LINE API is down; Down how long a
	// killed service stays down before it is started again; Gap the time between two faults.
	Pause, Down, Gap time.Duration
	// Drain bounds the wait for the last answers once the faults are over.
	Drain time.Duration
	// Replicas runs this many processes of every consumer (suite.ReplicatedServices).
	Replicas int
	// Services are killed in this order (default: every one, in start order).
	Services []string
	Logf     func(format string, args ...any)
}

func (o *Options) defaults() {
	if o.Messages <= 0 {
		o.Messages = 2000
	}
	if o.Chats <= 0 {
		o.Chats = 100
	}
	if o.Pause <= 0 {
		o.Pause = 60 * time.Second
	}
	if o.Down <= 0 {
		o.Down = 2 * time.Second
	}
	if o.Gap <= 0 {
		o.Gap = 5 * time.Second
	}
	if o.Drain <= 0 {
		o.Drain = 3 * time.Minute
	}
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	if len(o.Services) == 0 {
		o.Services = suite.Services
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
}

// Fault kinds.
const (
	KindSIGKILL = "sigkill"
	KindSIGTERM = "sigterm"
	KindPause   = "pause"
	KindOutage  = "outage"
	KindReset   = "reset"
)

// Fault is one fault of the run as it happened.
type Fault struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	// Replica is the replica of the service hit (services only).
	Replica int       `json:"replica,omitempty"`
	At      time.Time `json:"at"`
	// Sec is how long the fault lasted: signal → ready again, or the pause.
	Sec float64 `json:"sec"`
	// StopSec is signal → process ended; ReadySec restart → ready.
	StopSec  float64 `json:"stop_sec,omitempty"`
	ReadySec float64 `json:"ready_sec,omitempty"`
	// Exit is how the process ended.
	Exit string `json:"exit,omitempty"`
	// Messages are those first sent while the fault lasted.
	Messages int    `json:"messages"`
	Note     string `json:"note,omitempty"`
	Err      string `json:"error,omitempty"`
	end      time.Time
}

// DeadLetter is one dead letter a gateway holds after the run.
type DeadLetter struct {
	Gateway string `json:"gateway"`
	Queue   string `json:"queue"`
	Kind    string `json:"kind"`
	EventID string `json:"event_id"`
	Reason  string `json:"reason"`
}

// Result is a fault run.
type Result struct {
	StartedAt time.Time `json:"started_at"`
	Commit    string    `json:"commit,omitempty"`
	CPUs      int       `json:"cpus"`
	Messages  int       `json:"messages"`
	Chats     int       `json:"chats"`
	Replicas  int       `json:"replicas"`
	PauseSec  float64   `json:"pause_sec"`
	DownSec   float64   `json:"down_sec"`
	GapSec    float64   `json:"gap_sec"`
	RatePerS  float64   `json:"rate_per_sec"`

	Tally       Tally        `json:"tally"`
	DeadLetters []DeadLetter `json:"dead_letters"`
	Faults      []Fault      `json:"faults"`
	// Latency is first webhook attempt → first answer at the LINE API.
	Latency stats.Summary `json:"latency"`
	// WebhookRetries are webhook deliveries beyond the first (the gateway was down or did not
	// acknowledge); LINEFailed are LINE API requests the outage failed; LINEProblems requests
	// that broke a LINE rule.
	WebhookRetries int      `json:"webhook_retries"`
	LINEFailed     int      `json:"line_failed"`
	LINEProblems   []string `json:"line_problems,omitempty"`
	// Settled: after the drain no queue held an unacknowledged or unread entry.
	Settled bool `json:"settled"`

	TotalSec    float64  `json:"total_sec"`
	TrafficSec  float64  `json:"traffic_sec"`
	ScheduleSec float64  `json:"schedule_sec"`
	DrainSec    float64  `json:"drain_sec"`
	Errors      []string `json:"errors,omitempty"`
}

// OK is true when the run kept every promise: nothing lost, repeated, reordered or answered
// with an error, no dead letter, every fault carried out.
func (r *Result) OK() bool {
	return r.Tally.OK() && len(r.DeadLetters) == 0 && len(r.Errors) == 0 && r.Settled
}

// approverToken opens the gateways' dead-letter API for the run.
const approverToken = "faults-approver-token-0123456789abcdefghij"

// Run builds the services, starts them behind the fault proxies, sends the traffic through
// the fault schedule and judges what arrived.
func Run(ctx context.Context, o Options) (res *Result, err error) {
	o.defaults()
	started := time.Now()
	res = &Result{StartedAt: started, Commit: suite.GitCommit(o.Root), CPUs: runtime.NumCPU(), Messages: o.Messages,
		Chats: o.Chats, Replicas: o.Replicas, PauseSec: o.Pause.Seconds(), DownSec: o.Down.Seconds(), GapSec: o.Gap.Seconds()}
	if err := os.MkdirAll(o.LogDir, 0o755); err != nil {
		return nil, err
	}
	bin, iso := o.BinDir, o.Iso
	if bin == "" || iso == nil {
		var done func() error
		bin, iso, done, err = suite.Prepare(ctx, o.Root, "picoclaw-faults", o.Logf)
		if err != nil {
			return nil, err
		}
		defer func() { err = errors.Join(err, done()) }()
	}

	pgHost, viaProxy, err := throughProxy(iso.DSN)
	if err != nil {
		return nil, err
	}
	redisProxy, err := faultproxy.Listen("127.0.0.1:0", iso.RedisAddr)
	if err != nil {
		return nil, err
	}
	defer redisProxy.Close()
	pgProxy, err := faultproxy.Listen("127.0.0.1:0", pgHost)
	if err != nil {
		return nil, err
	}
	defer pgProxy.Close()
	proxiedDSN := viaProxy(pgProxy.Addr())

	plan := Plan{Messages: o.Messages, Chats: o.Chats}
	// HTTP/1.1, so that a reset drops the connection.
	line := suite.NewLineAPIHTTP1()
	defer line.Close()
	caEnv, err := line.CAEnv(o.LogDir)
	if err != nil {
		return nil, err
	}
	checker := NewChecker(plan)
	line.Observe(checker.Record)
	ollama := suite.NewOllama(new(atomic.Int64), "chat-v1:latest", "worker-v1:latest")
	defer ollama.Close()

	o.Logf("starting the suite with %d replica(s) of every consumer (schema %s)", o.Replicas, iso.Schema)
	s, err := suite.Start(ctx, suite.Options{Root: o.Root, BinDir: bin, LogDir: o.LogDir, Iso: iso, LineAPI: line.URL,
		Ollama: ollama.URL, LineUsers: plan.Users(), Replicas: o.Replicas, Env: append(caEnv,
			"PICOCLAW_REDIS_ADDR="+redisProxy.Addr(),
			"PICOCLAW_POSTGRES_DSN="+proxiedDSN,
			"PICOCLAW_APPROVAL_TOKENS=faults:"+approverToken,
		)})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil || !res.OK() {
			o.Logf("service logs are in %s", o.LogDir)
		}
		err = errors.Join(err, s.Stop())
	}()

	rdb := redis.NewClient(&redis.Options{Addr: iso.RedisAddr})
	defer rdb.Close()
	r := &run{o: o, s: s, line: line, redis: redisProxy, postgres: pgProxy}
	kills := 2 * len(o.Services)
	schedule := o.Gap + time.Duration(kills)*(o.Down+time.Second+o.Gap) + 3*(o.Pause+o.Gap) + o.Gap
	interval := schedule / time.Duration(o.Messages)
	res.RatePerS = float64(time.Second) / float64(interval)
	o.Logf("%d messages over %d chats at %.1f/s while the faults run (about %s)", o.Messages, o.Chats, res.RatePerS, schedule.Round(time.Second))

	trafficStart := time.Now()
	snd := newSender(plan, s.Procs["gateway-line"].PublicURL()+"/line/webhook", line, trafficStart, interval)
	sendCtx, stopSending := context.WithCancel(ctx)
	defer stopSending()
	sending := make(chan struct{})
	go func() {
		defer close(sending)
		snd.run(sendCtx)
	}()

	r.schedule(ctx)
	res.ScheduleSec = time.Since(trafficStart).Seconds()
	select {
	case <-sending:
	case <-time.After(o.Drain):
		stopSending()
		<-sending
		res.Errors = append(res.Errors, fmt.Sprintf("the sender had not delivered every message %s after the faults", o.Drain))
	case <-ctx.Done():
		stopSending()
		<-sending
		return res, ctx.Err()
	}
	res.TrafficSec = time.Since(trafficStart).Seconds()

	o.Logf("faults over; waiting for the last answers")
	drainStart := time.Now()
	acked, first := snd.state()
	res.Settled = r.drain(ctx, checker, acked, rdb, iso.RedisPrefix, drainStart.Add(o.Drain))
	res.DrainSec = time.Since(drainStart).Seconds()

	res.Tally = checker.Tally(acked)
	answers := checker.FirstAnswers()
	var lat []time.Duration
	for n := 1; n <= plan.Messages; n++ {
		if acked[n] && !answers[n].IsZero() {
			lat = append(lat, answers[n].Sub(first[n]))
		}
	}
	res.Latency = stats.Summarize(lat)
	for i := range r.faults {
		f := &r.faults[i]
		for n := 1; n <= plan.Messages; n++ {
			if !first[n].IsZero() && !first[n].Before(f.At) && first[n].Before(f.end) {
				f.Messages++
			}
		}
	}
	res.Faults = r.faults
	res.Errors = append(res.Errors, r.errs...)
	res.WebhookRetries = int(snd.retries.Load())
	res.LINEFailed = line.Failed()
	res.LINEProblems = line.Problems()
	for _, gw := range []string{"gateway-line", "gateway-slack"} {
		dl, err := deadLetters(ctx, s.Procs[gw].PublicURL(), approverToken)
		if err != nil {
			res.Errors = append(res.Errors, fmt.Sprintf("%s dead letters: %v", gw, err))
			continue
		}
		for _, d := range dl {
			res.DeadLetters = append(res.DeadLetters, DeadLetter{Gateway: gw, Queue: d.Queue, Kind: d.Kind, EventID: d.EventID, Reason: d.Reason})
		}
	}
	res.TotalSec = time.Since(started).Seconds()
	return res, nil
}

// throughProxy splits a Postgres URL DSN into its host:port and a function giving the same
// DSN through another address.
func throughProxy(dsn string) (host string, via func(addr string) string, err error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		return "", nil, fmt.Errorf("postgres DSN must be a URL with a host: %v", err)
	}
	host = u.Host
	if u.Port() == "" {
		host += ":5432"
	}
	return host, func(addr string) string {
		v := *u
		v.Host = addr
		return v.String()
	}, nil
}

// run carries out the fault schedule.
type run struct {
	o               Options
	s               *suite.Suite
	line            *suite.LineAPI
	redis, postgres *faultproxy.Proxy

	faults []Fault
	errs   []string
}

func (r *run) record(f Fault) {
	f.end = f.At.Add(time.Duration(f.Sec * float64(time.Second)))
	r.faults = append(r.faults, f)
	if f.Err != "" {
		r.errs = append(r.errs, fmt.Sprintf("%s %s: %s", f.Kind, f.Target, f.Err))
	}
	r.o.Logf("%-7s %-14s %5.1fs %s %s", f.Kind, f.Target, f.Sec, f.Note, f.Err)
}

// schedule runs every fault in turn with a gap between them.
func (r *run) schedule(ctx context.Context) {
	if !pause(ctx, r.o.Gap) {
		return
	}
	for _, name := range r.o.Services {
		reps := r.s.Replicas[name]
		if len(reps) == 0 {
			continue
		}
		// With replicas, SIGKILL hits the first and SIGTERM the second.
		for i, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
			r.record(r.kill(ctx, reps[i%len(reps)], sig))
			if !pause(ctx, r.o.Gap) {
				return
			}
		}
	}
	for _, p := range []struct {
		name  string
		proxy *faultproxy.Proxy
	}{{"redis", r.redis}, {"postgres", r.postgres}} {
		f := Fault{Kind: KindPause, Target: p.name, At: time.Now()}
		held := 0
		p.proxy.Pause()
		if pause(ctx, r.o.Pause) {
			held = p.proxy.Conns()
		}
		p.proxy.Resume()
		f.Sec = time.Since(f.At).Seconds()
		f.Note = fmt.Sprintf("%d connections held", held)
		r.record(f)
		if !pause(ctx, r.o.Gap) {
			return
		}
	}
	f := Fault{Kind: KindOutage, Target: "line-api", At: time.Now()}
	before := r.line.Failed()
	// Down for every request: 5xx, 429, dropped connections, and pushes delivered whose answer
	// is lost on the way back.
	r.line.Outage(-1, fakeline.Fault{Status: 500}, fakeline.Fault{Status: 503}, fakeline.Fault{Status: 429},
		fakeline.Fault{Reset: true}, fakeline.Fault{Status: 502, Accept: true})
	pause(ctx, r.o.Pause)
	r.line.Up()
	f.Sec = time.Since(f.At).Seconds()
	f.Note = fmt.Sprintf("%d requests failed", r.line.Failed()-before)
	r.record(f)
	if !pause(ctx, r.o.Gap) {
		return
	}
	f = Fault{Kind: KindReset, Target: "redis+postgres", At: time.Now()}
	f.Note = fmt.Sprintf("%d + %d connections dropped", r.redis.Reset(), r.postgres.Reset())
	r.record(f)
	pause(ctx, r.o.Gap)
}

// stopGrace bounds a process's shutdown after SIGTERM before it is killed (and the run fails).
const stopGrace = 60 * time.Second

// kill signals a process, waits for it to end, keeps it down for Options.Down and starts it
// again.
func (r *run) kill(ctx context.Context, p *suite.Proc, sig syscall.Signal) Fault {
	kind := KindSIGKILL
	if sig == syscall.SIGTERM {
		kind = KindSIGTERM
	}
	f := Fault{Kind: kind, Target: p.Name, Replica: p.Replica, At: time.Now()}
	if err := p.Signal(sig); err != nil {
		f.Err = err.Error()
		return f
	}
	select {
	case <-p.Done():
	case <-time.After(stopGrace):
		f.Err = fmt.Sprintf("still running %s after SIGTERM: killed", stopGrace)
		_ = p.Signal(syscall.SIGKILL)
		<-p.Done()
	}
	f.StopSec = time.Since(f.At).Seconds()
	if err := p.Stop(0); err != nil {
		f.Exit = err.Error()
	} else {
		f.Exit = "exit 0"
	}
	pause(ctx, r.o.Down)
	t0 := time.Now()
	var errs []error
	for attempt := 0; attempt < 5 && ctx.Err() == nil; attempt++ {
		err := r.s.Restart(ctx, p)
		if err == nil {
			break
		}
		errs = append(errs, err)
		pause(ctx, time.Second)
	}
	if len(errs) > 0 {
		f.Note = fmt.Sprintf("%d failed restarts: %v", len(errs), errors.Join(errs...))
		if len(errs) == 5 {
			f.Err = "not restarted"
		}
	}
	f.ReadySec = time.Since(t0).Seconds()
	f.Sec = time.Since(f.At).Seconds()
	return f
}

// drain waits until every acknowledged message has an answer and the gateways' queues are
// settled, or until deadline; it reports whether they settled.
func (r *run) drain(ctx context.Context, c *Checker, acked []bool, rdb *redis.Client, prefix string, deadline time.Time) bool {
	want := 0
	for _, a := range acked {
		if a {
			want++
		}
	}
	for {
		if c.Answered(acked) == want {
			settled, err := queuesSettled(ctx, rdb, prefix)
			if err != nil {
				r.errs = append(r.errs, "queues: "+err.Error())
				return false
			}
			if settled {
				return true
			}
		}
		if time.Now().After(deadline) || !pause(ctx, 500*time.Millisecond) {
			settled, _ := queuesSettled(ctx, rdb, prefix)
			return settled
		}
	}
}

// queuesSettled reports whether the LINE gateway's inbox and outbox hold no entry that is
// unread or read but not acknowledged — nothing that could still be sent.
func queuesSettled(ctx context.Context, rdb *redis.Client, prefix string) (bool, error) {
	for _, q := range []string{"inbox", "outbox"} {
		stream := prefix + q + ":line"
		groups, err := rdb.XInfoGroups(ctx, stream).Result()
		if err != nil {
			return false, fmt.Errorf("%s: %w", stream, err)
		}
		last, err := rdb.XRevRangeN(ctx, stream, "+", "-", 1).Result()
		if err != nil {
			return false, fmt.Errorf("%s: %w", stream, err)
		}
		i := slices.IndexFunc(groups, func(g redis.XInfoGroup) bool { return g.Name == "gateway-line" })
		if i < 0 {
			return false, fmt.Errorf("%s: no gateway-line group", stream)
		}
		g := groups[i]
		if g.Pending > 0 || (len(last) > 0 && compareIDs(last[0].ID, g.LastDeliveredID) > 0) {
			return false, nil
		}
	}
	return true, nil
}

// compareIDs orders stream ids ("ms-seq").
func compareIDs(a, b string) int {
	var am, as, bm, bs uint64
	_, _ = fmt.Sscanf(a, "%d-%d", &am, &as)
	_, _ = fmt.Sscanf(b, "%d-%d", &bm, &bs)
	return cmp.Or(cmp.Compare(am, bm), cmp.Compare(as, bs))
}

// pause waits d; false when ctx ends first.
func pause(ctx context.Context, d time.Duration) bool { return sleepUntil(ctx, time.Now().Add(d)) }
