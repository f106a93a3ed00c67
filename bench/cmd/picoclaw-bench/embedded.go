package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picoclaw-suite/picoclaw/bench/internal/report"
	"github.com/picoclaw-suite/picoclaw/bench/internal/stats"
	"github.com/picoclaw-suite/picoclaw/bench/internal/suite"
)

// embeddedOptions are the flags of the embedded suite's run (-embedded).
type embeddedOptions struct {
	on       bool
	messages int
	users    int
	inFlight int
	runs     int
	settle   time.Duration
	idle     time.Duration
	after    time.Duration
}

func (e *embeddedOptions) flags() {
	flag.BoolVar(&e.on, "embedded", false, "measure the embedded suite (picoclaw run) instead of the services; writes embedded.json and embedded.md")
	flag.IntVar(&e.messages, "embedded-messages", 10000, "LINE text messages sent through the embedded suite's webhook")
	flag.IntVar(&e.users, "embedded-users", 256, "LINE users the embedded suite's messages come from")
	flag.IntVar(&e.inFlight, "embedded-inflight", 32, "embedded suite: messages awaiting their answer at a time")
	flag.IntVar(&e.runs, "embedded-runs", 5, "embedded suite: starts and stops measured on an empty data directory and again on the data after the traffic")
	flag.DurationVar(&e.settle, "embedded-settle", 5*time.Second, "embedded suite: wait before an idle CPU window")
	flag.DurationVar(&e.idle, "embedded-idle", 10*time.Second, "embedded suite: length of an idle CPU window")
	flag.DurationVar(&e.after, "embedded-after", 60*time.Second, "embedded suite: when after the traffic memory is read again")
}

// answerTimeout bounds the wait for one message's answer; a message without one by then is
// lost unless its answer still arrives before the tally.
const answerTimeout = 60 * time.Second

// runEmbedded measures `picoclaw run --chat off`: binary size, start and stop, idle memory and
// CPU, LINE messages through the real webhook, memory and CPU after them, the data directory
// before and after the traffic and after `picoclaw data compact`.
func runEmbedded(ctx context.Context, o options) (err error) {
	root, rep, err := setup(&o)
	if err != nil {
		return err
	}
	eo := o.embedded
	tmp, err := os.MkdirTemp("", "picoclaw-bench-embedded")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	logf("building picoclaw (stripped)")
	bin, err := suite.BuildEmbedded(ctx, root, tmp)
	if err != nil {
		return err
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return err
	}
	e := &report.Embedded{BinaryBytes: fi.Size(), BuildFlags: "go build " + strings.Join(suite.StrippedBuildFlags, " ")}
	rep.Embedded = e

	line := suite.NewLineAPI()
	defer line.Close()
	ollama := suite.NewOllama(new(atomic.Int64), o.chatModel, o.workerName)
	defer ollama.Close()
	users := lineUsers(eo.users)
	caEnv, err := line.CAEnv(tmp)
	if err != nil {
		return err
	}
	opts := suite.EmbeddedOptions{Bin: bin, Root: root, LineAPI: line.URL, Ollama: ollama.URL, LineUsers: users,
		Env: append(caEnv, extraEnv(o)...)}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: eo.inFlight, IdleConnTimeout: time.Minute}}
	profiles := filepath.Join(o.out, "profiles")

	logf("%d starts and stops on an empty data directory", eo.runs)
	if e.Fresh, err = startStops(ctx, opts, client, eo.runs, func(i int) string { return filepath.Join(tmp, fmt.Sprintf("fresh-%d", i)) }); err != nil {
		return err
	}

	// The data directory of the measured run stays for inspection (suite.log, the databases).
	opts.DataDir = filepath.Join(o.out, "embedded-data")
	if err := os.RemoveAll(opts.DataDir); err != nil {
		return err
	}
	s, err := suite.StartEmbedded(ctx, opts)
	if err != nil {
		return err
	}
	running := true
	defer func() {
		if running {
			_, serr := s.Terminate(20 * time.Second)
			err = errors.Join(err, serr)
		}
	}()
	if _, err := s.AwaitWebhook(client, 10*time.Second); err != nil {
		return err
	}
	// Any internal listener serves the whole process's /metrics (and /debug/pprof with -profile).
	internal, err := suite.InternalURL(opts.DataDir, "approval")
	if err != nil {
		return err
	}
	pprofURL := internal
	mem := func() (report.ProcMemory, error) { return memory(ctx, s.Pid(), internal) }
	logf("idle: %s to settle, then CPU over %s", eo.settle, eo.idle)
	if err := sleep(ctx, eo.settle); err != nil {
		return err
	}
	if e.Idle.Memory, err = mem(); err != nil {
		return err
	}
	if e.Idle.CPUPercent, err = cpuPercent(ctx, s.Pid(), eo.idle); err != nil {
		return err
	}
	e.Idle.CPUWindow = fmt.Sprintf("%s from %s after the start", eo.idle, eo.settle)
	if err := snapshot(e, opts.DataDir, "before the traffic"); err != nil {
		return err
	}
	if o.profile {
		if err := fetch(ctx, pprofURL+"/debug/pprof/heap", filepath.Join(profiles, "embedded.idle.heap.pprof")); err != nil {
			return err
		}
	}

	logf("traffic: %d messages from %d users, %d in flight", eo.messages, eo.users, eo.inFlight)
	var pwg sync.WaitGroup
	if o.profile {
		pwg.Go(func() {
			if err := fetch(ctx, pprofURL+"/debug/pprof/profile?seconds=10", filepath.Join(profiles, "embedded.traffic.cpu.pprof")); err != nil {
				logf("profile: %v", err)
			}
		})
	}
	calls, pushes := ollama.Calls(), line.Pushes.Load()
	ledger := suite.NewLedger(eo.messages)
	line.Observe(ledger.Record)
	t := embeddedTraffic{hook: suite.Webhook{URL: s.WebhookURL, Client: client}, line: line, ledger: ledger, users: users, exited: s.Done()}
	cpu0, tool0, err := cpuPair(s.Pid())
	if err != nil {
		return err
	}
	if err := t.send(ctx, eo.messages, eo.inFlight); err != nil {
		return fmt.Errorf("traffic: %w\n%s", err, s.Output())
	}
	end := time.Now()
	cpu1, tool1, err := cpuPair(s.Pid())
	if err != nil {
		return err
	}
	if e.AfterTraffic.Memory, err = mem(); err != nil {
		return err
	}
	pwg.Wait()
	logf("after the traffic: %s to settle, then CPU over %s", eo.settle, eo.idle)
	if err := sleep(ctx, eo.settle); err != nil {
		return err
	}
	if o.profile {
		pwg.Go(func() {
			url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", pprofURL, int(eo.idle.Seconds()))
			if err := fetch(ctx, url, filepath.Join(profiles, "embedded.after.cpu.pprof")); err != nil {
				logf("profile: %v", err)
			}
		})
	}
	cpu, err := cpuPercent(ctx, s.Pid(), eo.idle)
	if err != nil {
		return err
	}
	pwg.Wait()
	e.AfterTraffic.CPUPercent, e.AfterTraffic.CPUWindow = cpu, fmt.Sprintf("%s from %s after the last answer", eo.idle, eo.settle)
	if err := snapshot(e, opts.DataDir, "after the traffic"); err != nil {
		return err
	}
	logf("memory %s after the traffic", eo.after)
	if err := sleep(ctx, time.Until(end.Add(eo.after))); err != nil {
		return err
	}
	e.AfterSec = eo.after.Seconds()
	if e.Later.Memory, err = mem(); err != nil {
		return err
	}
	if o.profile {
		if err := fetch(ctx, pprofURL+"/debug/pprof/heap", filepath.Join(profiles, "embedded.after.heap.pprof")); err != nil {
			return err
		}
	}
	// Counted only now: an answer given twice had a minute to show up.
	e.Traffic = t.result(eo, end)
	e.Traffic.Pushes = int(line.Pushes.Load() - pushes)
	e.Traffic.ModelCalls = int(ollama.Calls() - calls)
	if n := float64(e.Traffic.Answered); n > 0 {
		e.Traffic.CPUPerMsgMS = ms(cpu1-cpu0) / n
		e.Traffic.ToolCPUPerMsgMS = ms(tool1-tool0) / n
	}

	running = false
	exit, err := s.Terminate(20 * time.Second)
	if err != nil {
		return err
	}
	e.ExitAfterTrafficMS = ms(exit)
	if err := snapshot(e, opts.DataDir, "after stop"); err != nil {
		return err
	}
	logf("picoclaw data compact")
	t0 := time.Now()
	out, err := suite.Compact(ctx, bin, root, opts.DataDir)
	if err != nil {
		return err
	}
	e.CompactMS = ms(time.Since(t0))
	if err := snapshot(e, opts.DataDir, "after compact"); err != nil {
		return err
	}
	logf("%d starts and stops on the data after the traffic", eo.runs)
	if e.WithData, err = startStops(ctx, opts, client, eo.runs, func(int) string { return opts.DataDir }); err != nil {
		return err
	}
	rep.Notes = append(rep.Notes,
		"picoclaw data compact said: "+strings.Join(strings.Fields(out), " "),
		"Memory from /proc/<pid>/status (VmRSS, RssAnon, RssFile, VmHWM) and /proc/<pid>/smaps_rollup (PSS; USS = Private_Clean + Private_Dirty); "+
			"CPU from /proc/<pid>/stat (utime + stime, 10 ms ticks) over the window named.",
		"The suite logs JSON at level info to suite.log, as in production; traces are not exported.",
		"The load tool and the fakes share the same CPUs with the suite.")
	rep.Notes = append(rep.Notes, "The data directory of the run is kept in "+inRepo(root, opts.DataDir)+".")
	if o.profile {
		rep.Notes = append(rep.Notes, "Profiles (debug.pprof on) under "+inRepo(root, profiles)+"; the after-traffic CPU window was profiled at the same time.")
	}
	return finish(rep, o, "embedded")
}

// startStops starts the suite runs times, each on the data directory dir(i), and stops it
// once its webhook answers.
func startStops(ctx context.Context, opts suite.EmbeddedOptions, client *http.Client, runs int, dir func(int) string) (report.StartStop, error) {
	var ready, hook, exit []time.Duration
	for i := range runs {
		opts.DataDir = dir(i)
		s, err := suite.StartEmbedded(ctx, opts)
		if err != nil {
			return report.StartStop{}, err
		}
		w, err := s.AwaitWebhook(client, 10*time.Second)
		if err != nil {
			_, _ = s.Terminate(20 * time.Second)
			return report.StartStop{}, err
		}
		d, err := s.Terminate(20 * time.Second)
		if err != nil {
			return report.StartStop{}, err
		}
		ready, hook, exit = append(ready, s.Ready), append(hook, w), append(exit, d)
		logf("run %d: ready %s, webhook %s, exit %s", i+1, s.Ready, w, d)
	}
	return report.StartStop{Runs: runs, Ready: stats.Summarize(ready), Webhook: stats.Summarize(hook), Exit: stats.Summarize(exit)}, nil
}

// embeddedTraffic sends numbered LINE text messages and follows their answers.
type embeddedTraffic struct {
	hook   suite.Webhook
	line   *suite.LineAPI
	ledger *suite.Ledger
	users  []string
	// run tells apart the reply tokens and event ids of several runs against one fake LINE API.
	run string
	// exited ends the traffic early: the suite is gone.
	exited <-chan struct{}

	mu       sync.Mutex
	acked    []int
	latency  []time.Duration
	errs     int
	start    time.Time
	lastSeen time.Time
}

// send posts messages 1..n with at most inFlight awaiting their answer.
func (t *embeddedTraffic) send(ctx context.Context, n, inFlight int) error {
	slots := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	t.start = time.Now()
	for i := 1; i <= n; i++ {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		case <-t.exited:
			wg.Wait()
			return errors.New("picoclaw run exited during the traffic")
		}
		token := fmt.Sprintf("embedded-reply-%s%010d", t.run, i)
		t.line.IssueReplyToken(token)
		body := suite.TextEvent(fmt.Sprintf("01EMBED%s%019d", t.run, i), t.users[i%len(t.users)], token,
			suite.Marked("今日はいい天気だね、散歩に行こうかな", i), time.Now())
		sig := suite.Sign(body)
		wg.Go(func() {
			defer func() { <-slots }()
			t.one(ctx, i, body, sig)
		})
	}
	wg.Wait()
	return ctx.Err()
}

func (t *embeddedTraffic) one(ctx context.Context, i int, body []byte, sig string) {
	wait := t.ledger.Await(i)
	t0 := time.Now()
	code, err := t.hook.Post(body, sig)
	t.mu.Lock()
	if err != nil || code != http.StatusOK {
		t.errs++
		t.mu.Unlock()
		return
	}
	t.acked = append(t.acked, i)
	t.mu.Unlock()
	select {
	case at := <-wait:
		t.mu.Lock()
		t.latency = append(t.latency, at.Sub(t0))
		if at.After(t.lastSeen) {
			t.lastSeen = at
		}
		t.mu.Unlock()
	case <-time.After(answerTimeout):
	case <-ctx.Done():
	case <-t.exited:
	}
}

// result tallies the answers; end is when the sending finished.
func (t *embeddedTraffic) result(eo embeddedOptions, end time.Time) report.Traffic {
	t.mu.Lock()
	defer t.mu.Unlock()
	tally := t.ledger.Tally(t.acked)
	last := t.lastSeen
	if last.IsZero() {
		last = end
	}
	secs := last.Sub(t.start).Seconds()
	return report.Traffic{Messages: eo.messages, Users: eo.users, InFlight: eo.inFlight, WebhookErrors: t.errs,
		Answered: tally.Answered, Lost: tally.Lost, Duplicated: tally.Duplicated, Unattributed: tally.Unattributed,
		Seconds: secs, MsgPerSec: float64(tally.Answered) / secs, Latency: stats.Summarize(t.latency)}
}

// cpuPercent is pid's CPU time over window as a percentage of one core.
func cpuPercent(ctx context.Context, pid int, window time.Duration) (float64, error) {
	c0, err := suite.ProcessCPU(pid)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	if err := sleep(ctx, window); err != nil {
		return 0, err
	}
	c1, err := suite.ProcessCPU(pid)
	if err != nil {
		return 0, err
	}
	return 100 * float64(c1-c0) / float64(time.Since(t0)), nil
}

// cpuPair is the CPU time of pid and of this process.
func cpuPair(pid int) (proc, tool time.Duration, err error) {
	if proc, err = suite.ProcessCPU(pid); err != nil {
		return 0, 0, err
	}
	tool, err = suite.ProcessCPU(os.Getpid())
	return proc, tool, err
}

// memory reads pid's resident, proportional and unique memory, and the Go runtime's part from
// the /metrics of internal (a listener of that process).
func memory(ctx context.Context, pid int, internal string) (report.ProcMemory, error) {
	m, err := suite.ReadMemory(pid)
	if err != nil {
		return report.ProcMemory{}, err
	}
	p, err := suite.ReadProportional(pid)
	if err != nil {
		return report.ProcMemory{}, err
	}
	g, err := suite.ReadGoRuntime(ctx, http.DefaultClient, internal)
	if err != nil {
		return report.ProcMemory{}, err
	}
	return report.ProcMemory{RSSMB: mb(m.RSS), AnonMB: mb(m.Anon), FileMB: mb(m.File), PSSMB: mb(p.PSS), USSMB: mb(p.USS),
		FilePMDMB: mb(p.FilePMD), PeakMB: mb(m.Peak), Go: &report.GoMemory{HeapInuseMB: mb(g.HeapInuse), HeapFreeMB: mb(g.HeapIdle - g.HeapReleased),
			StacksMB: mb(g.Stack), HeldMB: mb(g.Held()), Goroutines: g.Goroutines}}, nil
}

// snapshot adds the data directory's files to the report.
func snapshot(e *report.Embedded, dir, when string) error {
	files, err := suite.DataFiles(dir)
	if err != nil {
		return err
	}
	s := report.DataSnapshot{When: when}
	for _, f := range files {
		s.Files = append(s.Files, report.DataFile{Path: f.Path, Bytes: f.Bytes})
	}
	e.Data = append(e.Data, s)
	return nil
}

// inRepo shows path relative to the repository root when it lies inside it.
func inRepo(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
