package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/picoclaw-suite/picoclaw/pkg/buildinfo"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/idlemem"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/ollama"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	approval "github.com/picoclaw-suite/picoclaw/services/approval/service"
	chatmio "github.com/picoclaw-suite/picoclaw/services/chat-mio/service"
	coderorder "github.com/picoclaw-suite/picoclaw/services/coder-order/service"
	executor "github.com/picoclaw-suite/picoclaw/services/executor/service"
	gatewayline "github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
	gatewayslack "github.com/picoclaw-suite/picoclaw/services/gateway-slack/service"
	heartbeat "github.com/picoclaw-suite/picoclaw/services/heartbeat/service"
	routershiro "github.com/picoclaw-suite/picoclaw/services/router-shiro/service"
)

// component is one service of the embedded suite.
type component struct {
	name string
	run  func(ctx context.Context) error
}

// suite is the embedded single-process deployment: every service's public Run, an in-process
// Redis and the SQLite audit store, all under one data directory.
type suite struct {
	g       *globals
	dataDir string
	user    string
	// log is every service's log (each record is one write; the writer serialises them).
	log *suiteLog
	// lock holds the data directory for this process.
	lock       *os.File
	listeners  map[string]net.Listener
	services   config.Services
	offline    bool
	components []component
	notes      []string
	keys       map[string]svcauth.KeyPair
	cliCreds   *svcauth.Credentials
	// loginToken is the terminal user's REST and console token (credentials/login.token).
	loginToken string
	started    time.Time
}

// runOptions are the flags of `picoclaw run`.
type runOptions struct {
	dataDir, user string
	// chat is on (read the terminal), off (run as a service) or auto (on when stdin is a terminal).
	chat string
	log  logOptions
	// grace bounds the wait for in-flight work at shutdown; what is still running then is cancelled.
	grace time.Duration
}

func newRunCmd(g *globals) *cobra.Command {
	o := runOptions{}
	cmd := &cobra.Command{
		Use:   "run [--data DIR] [--user NAME] [--chat auto|on|off]",
		Short: "start the whole suite in this process and chat in this terminal (or run it as a service)",
		Long: "Start the whole suite in this process and chat in this terminal (or run it as a service).\n" +
			"The banner shows the approval console and REST URLs and your login token; they are also written to\n" +
			"the run state file, which jobs, job, approve, deny, auto-approve and status read when no URL, token\n" +
			"or config is given.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.dataDir == "" {
				o.dataDir = defaultDataDir(g.io.Getenv)
			}
			if g.statePath == "" {
				g.statePath = defaultStatePath(g.io.Getenv)
			}
			return runEmbedded(cmd.Context(), g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dataDir, "data", "", "directory for all state: the audit and state databases, the workspace, the credentials and the logs\n(default: ./data when it holds a suite, else $XDG_DATA_HOME/picoclaw)")
	f.StringVar(&o.user, "user", defaultUser(g), "your name; the session is cli:<name> and you are its approver (env PICOCLAW_USER)")
	f.StringVar(&o.chat, "chat", "auto", "on: chat in this terminal; off: run as a service until SIGTERM; auto: on when stdin is a terminal")
	f.IntVar(&o.log.maxMB, "log-max-size", 20, "rotate suite.log when it reaches this many MB")
	f.DurationVar(&o.log.maxAge, "log-max-age", 24*time.Hour, "rotate suite.log when it is this old")
	f.IntVar(&o.log.keep, "log-keep", 5, "rotated logs to keep (older ones are deleted)")
	f.DurationVar(&o.grace, "grace", 2*time.Second, "at shutdown, how long in-flight work may finish before it is cancelled")
	_ = cmd.MarkFlagDirname("data")
	_ = cmd.RegisterFlagCompletionFunc("chat", fixedCompletions("auto", "on", "off"))
	return cmd
}

func runEmbedded(ctx context.Context, g *globals, o runOptions) error {
	interactive, err := o.interactive(g.io.In)
	if err != nil {
		return err
	}
	if err := o.log.validate(); err != nil {
		return err
	}
	start := time.Now()
	s, err := newSuite(ctx, g, o)
	if err != nil {
		return err
	}
	defer s.close()
	runCtx, stop := context.WithCancel(ctx)
	errc := s.start(runCtx)
	rotated := s.log.rotateEvery(runCtx, o.log.maxAge)
	// The heap a burst of traffic grew and the pages of the binary only the start or the burst
	// needed are handed back to the system once the suite is idle (within a window of it).
	idlemem.Limit(idlemem.SuiteLimit)
	released := make(chan struct{})
	go func() { defer close(released); idlemem.Keep(runCtx, idlemem.DefaultFirst, idlemem.DefaultWindow) }()
	defer func() {
		stop()
		s.wait(errc, o.grace)
		<-rotated
		<-released
	}()
	if err := s.waitReady(runCtx, errc, 60*time.Second); err != nil {
		return err
	}
	st := s.runState()
	if g.statePath != "" {
		if err := writeRunState(g.statePath, st); err != nil {
			// Not fatal: the banner shows the same; only the other terminals' defaults are missing.
			fmt.Fprintf(g.io.Err, "picoclaw: %s\n", say(g.locale, txtStateNotWritten, g.statePath, sayError(err, g.locale)))
		} else {
			defer removeRunState(g.statePath, st.PID)
		}
	}
	s.banner(time.Since(start), interactive)
	chatDone := make(chan error, 1)
	go func() {
		chatDone <- chatSession(runCtx, g, s.cliCreds, s.user, s.services.ChatMio.URL, s.listeners["cli"], interactive)
	}()
	select {
	case err := <-chatDone:
		return err
	case end := <-errc:
		errc <- end // wait counts every end
		if runCtx.Err() != nil {
			// Shutting down (Ctrl-C): services stopping is expected.
			return <-chatDone
		}
		// A service stopped on its own: end the session and say which one and why.
		stop()
		<-chatDone
		return texts.Wrap(nil, end.err, txtServiceStopped, end.name, sayError(end.err, g.locale), filepath.Join(s.dataDir, "suite.log"))
	}
}

// interactive decides whether `run` chats in the terminal.
func (o runOptions) interactive(in io.Reader) (bool, error) {
	switch o.chat {
	case "on":
		return true, nil
	case "off":
		return false, nil
	case "auto":
		f, ok := in.(*os.File)
		if !ok {
			return true, nil
		}
		// A terminal answers the terminal ioctl; /dev/null, pipes and files do not.
		_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
		return err == nil, nil
	}
	return false, usage(txtChatMode, strconv.Quote(o.chat))
}

func newSuite(ctx context.Context, g *globals, o runOptions) (*suite, error) {
	dataDir := o.dataDir
	if err := os.MkdirAll(filepath.Join(dataDir, "workspace"), 0o750); err != nil {
		return nil, texts.Wrap(nil, err, txtDataDir, dataDir, trouble(err))
	}
	// Nothing but this suite may hold the data directory: two suites on one state file would
	// answer every message twice.
	lock, err := lockDataDir(dataDir)
	if err != nil {
		return nil, err
	}
	s := &suite{g: g, dataDir: dataDir, user: o.user, lock: lock, listeners: map[string]net.Listener{}, started: time.Now(),
		log: openSuiteLog(filepath.Join(dataDir, "suite.log"), o.log)}
	if s.keys, err = loadOrCreateSuiteKeys(filepath.Join(dataDir, "credentials")); err != nil {
		s.close()
		return nil, err
	}
	if s.cliCreds, err = svcauth.Load(svcauth.CLI, authFor(s.keys, svcauth.CLI)); err != nil {
		s.close()
		return nil, err
	}
	// Every service gets a free loopback port; the URLs are known before anything starts. The
	// gateways and approval also get their separate public listener.
	names := []string{"gateway-line", "gateway-slack", "chat-mio", "router-shiro", "coder-order", "approval", "executor", "heartbeat", "cli",
		"gateway-line-public", "gateway-slack-public", "approval-public"}
	eps := map[string]config.Endpoint{}
	for _, n := range names {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			s.close()
			return nil, err
		}
		s.listeners[n] = ln
		eps[n] = config.Endpoint{Listen: ln.Addr().String(), URL: "http://" + ln.Addr().String()}
	}
	for _, n := range []string{"gateway-line", "gateway-slack", "approval"} {
		e, pub := eps[n], eps[n+"-public"]
		e.PublicListen, e.PublicURL = pub.Listen, pub.URL
		eps[n] = e
	}
	s.services = config.Services{
		GatewayLine: eps["gateway-line"], GatewaySlack: eps["gateway-slack"], ChatMio: eps["chat-mio"],
		RouterShiro: eps["router-shiro"], CoderOrder: eps["coder-order"], Approval: eps["approval"],
		Executor: eps["executor"], Heartbeat: eps["heartbeat"], CLI: eps["cli"],
	}
	if err := s.configure(ctx); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *suite) configure(ctx context.Context) error {
	c := defaultSuiteConfigs()
	if err := c.load(s.g.cfgPath, s.g.lookupEnv()); err != nil {
		if fault.MessageOf(err) != nil {
			return err // the file cannot be read
		}
		if s.g.cfgPath != "" {
			return texts.Wrap(nil, err, txtConfigDecode, s.g.cfgPath, err.Error())
		}
		return texts.Wrap(nil, err, txtConfigInvalid, err.Error())
	}
	s.offline = !ollamaReachable(ctx, c.cm.Ollama.BaseURL)
	if !s.offline {
		s.notes = append(s.notes, s.modelNotes(ctx, c)...)
		shareRestarter(c)
	}
	auditKey := ""
	if !c.ap.Approval.Audit.Key.Set() {
		key, err := loadOrCreateSecret(filepath.Join(s.dataDir, filepath.Dir(auditKeyFile)), filepath.Base(auditKeyFile))
		if err != nil {
			return err
		}
		auditKey = key
	}
	token, err := loadOrCreateSecret(filepath.Join(s.dataDir, filepath.Dir(loginTokenFile)), filepath.Base(loginTokenFile))
	if err != nil {
		return err
	}
	s.loginToken = token
	c.embed(embedded{dataDir: s.dataDir, services: s.services, keys: s.keys, user: s.user, auditKey: auditKey,
		loginToken: token, offline: s.offline, lookupEnv: s.g.io.Getenv})
	for _, sc := range c.each() {
		sc.wiring.Listener, sc.wiring.PublicListener, sc.wiring.LogWriter = s.listeners[sc.name], s.listeners[sc.name+"-public"], s.log
		// The components call each other in process; the listener serves streams and any
		// other process (picoclaw status, jobs …).
		if sc.wiring.Listener != nil {
			sc.wiring.Listener = rpcserver.InProcess(sc.wiring.Listener)
		}
	}

	s.components = []component{
		{"approval", func(ctx context.Context) error { return approval.Run(ctx, c.ap) }},
		{"heartbeat", func(ctx context.Context) error { return heartbeat.Run(ctx, c.hb) }},
		{"executor", func(ctx context.Context) error { return executor.Run(ctx, c.ex) }},
		{"coder-order", func(ctx context.Context) error { return coderorder.Run(ctx, c.co) }},
		{"router-shiro", func(ctx context.Context) error { return routershiro.Run(ctx, c.rs) }},
		{"chat-mio", func(ctx context.Context) error { return chatmio.Run(ctx, c.cm) }},
	}
	// The gateways need their channel's secrets; without them LINE/Slack are simply not offered.
	s.gateway(component{"gateway-line", func(ctx context.Context) error { return gatewayline.Run(ctx, c.gl) }},
		c.lineConfigured(),
		"LINE は未設定です（LINE_CHANNEL_SECRET / LINE_CHANNEL_ACCESS_TOKEN）", "LINE is not configured (LINE_CHANNEL_SECRET / LINE_CHANNEL_ACCESS_TOKEN)")
	s.gateway(component{"gateway-slack", func(ctx context.Context) error { return gatewayslack.Run(ctx, c.gs) }},
		c.slackConfigured(),
		"Slack は未設定です（SLACK_SIGNING_SECRET / SLACK_BOT_TOKEN）", "Slack is not configured (SLACK_SIGNING_SECRET / SLACK_BOT_TOKEN)")
	return nil
}

// gateway runs a gateway when its channel's secrets are set; otherwise the suite does not
// offer the channel: its listeners are closed and a note says which secrets are missing.
func (s *suite) gateway(c component, configured bool, noteJA, noteEN string) {
	if configured {
		s.components = append(s.components, c)
		return
	}
	s.closeListener(c.name)
	s.closeListener(c.name + "-public")
	s.notes = append(s.notes, msg(s.g.locale, noteJA, noteEN))
}

// modelNotes are the banner's notes on local models that are missing or misconfigured, each
// with the command that fixes it; the suite starts all the same.
func (s *suite) modelNotes(ctx context.Context, c *suiteConfigs) []string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, models := localModels(c)
	var notes []string
	for _, m := range models {
		st := ollama.Check(ctx, ollama.NewAPI(m.Config.BaseURL, nil), m.Config.Model, m.Config.NumCtx, m.Config.MaxContext)
		if st.OK() {
			continue
		}
		who := strings.Join(m.Agents, ", ")
		l := s.g.locale
		notes = append(notes, msg(l,
			fmt.Sprintf("⚠ ローカルモデル %s（%s）を使えません: %s。対処: %s", m.Config.Model, who, st.ProblemText(l), st.FixText(l)),
			fmt.Sprintf("⚠ local model %s (%s) is not usable: %s. Fix: %s", m.Config.Model, who, st.ProblemText(l), st.FixText(l))))
	}
	return notes
}

// shareRestarter gives chat-mio (chat and vision model), router-shiro and coder-order's
// orders on Ollama one Restarter, so a failure seen by several restarts Ollama once. A model on
// another server or with another restart command gets one of its own (ollama.Guarded).
func shareRestarter(c *suiteConfigs) {
	o := llm.Config{Provider: llm.ProviderOllama}.WithOllama(c.cm.Ollama).WithDefaults()
	r := ollama.NewRestarter(ollama.RestarterConfig{Command: o.RestartCommand, BaseURL: o.BaseURL})
	c.cm.Restarter, c.rs.Restarter, c.co.Restarter = r, r, r
}

func ollamaReachable(ctx context.Context, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/api/tags", nil)
	if err != nil {
		return false
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

func (s *suite) closeListener(name string) {
	if ln := s.listeners[name]; ln != nil {
		_ = ln.Close()
		delete(s.listeners, name)
	}
}

// start runs every component; the channel receives each one's end.
func (s *suite) start(ctx context.Context) chan componentEnd {
	errc := make(chan componentEnd, len(s.components))
	for _, c := range s.components {
		go func() { errc <- componentEnd{name: c.name, err: c.run(ctx)} }()
	}
	return errc
}

type componentEnd struct {
	name string
	err  error
}

// wait collects every component's end, giving up after limit (a stuck service must not keep
// the terminal hostage).
func (s *suite) wait(errc chan componentEnd, limit time.Duration) {
	deadline := time.After(limit)
	for range s.components {
		select {
		case end := <-errc:
			if end.err != nil && !errors.Is(end.err, context.Canceled) {
				fmt.Fprintf(s.g.io.Err, "picoclaw: %s: %s\n", end.name, sayError(end.err, s.g.locale))
			}
		case <-deadline:
			fmt.Fprintf(s.g.io.Err, "picoclaw: %s\n", say(s.g.locale, txtStillStopping, limit.String()))
			return
		}
	}
}

// waitReady polls every service's /healthz; a service that stops early fails the start.
func (s *suite) waitReady(ctx context.Context, errc chan componentEnd, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	urls := map[string]string{
		"approval": s.services.Approval.URL, "heartbeat": s.services.Heartbeat.URL, "executor": s.services.Executor.URL,
		"coder-order": s.services.CoderOrder.URL, "router-shiro": s.services.RouterShiro.URL, "chat-mio": s.services.ChatMio.URL,
		"gateway-line": s.services.GatewayLine.URL, "gateway-slack": s.services.GatewaySlack.URL,
	}
	client := &http.Client{Timeout: time.Second}
	bar := newProgress(s.g.io.Err, msg(s.g.locale, "起動中", "starting"), int64(len(s.components)), msg(s.g.locale, "サービス", "services"))
	defer bar.Done()
	for _, c := range s.components {
		bar.Label(msg(s.g.locale, "起動中 ", "starting ") + c.name)
		for {
			res, err := client.Get(urls[c.name] + "/healthz")
			if err == nil {
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					bar.Add(1)
					break
				}
			}
			select {
			case end := <-errc:
				errc <- end
				return texts.Wrap(nil, end.err, txtStoppedStarting, end.name, sayError(end.err, s.g.locale), filepath.Join(s.dataDir, "suite.log"))
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				return texts.New(nil, txtNotHealthy, c.name, limit, filepath.Join(s.dataDir, "suite.log"))
			}
		}
	}
	return nil
}

func (s *suite) banner(took time.Duration, interactive bool) {
	w := s.g.io.Out
	fmt.Fprintf(w, "PicoClaw Suite — %s (%d services, %s)\n", msg(s.g.locale, "組み込みモード", "embedded mode"), len(s.components), took.Round(time.Millisecond))
	fmt.Fprintf(w, "  data: %s   log: %s\n", s.dataDir, filepath.Join(s.dataDir, "suite.log"))
	st := s.runState()
	fmt.Fprintf(w, "  %s: %s   REST: %s\n", msg(s.g.locale, "承認コンソール", "approval console"), st.ConsoleURL, st.RESTURL)
	// On a terminal the token is shown; a service's output goes to logs, which get only its file.
	token := st.Token
	if !interactive {
		token = filepath.Join(st.DataDir, loginTokenFile)
	}
	fmt.Fprintf(w, "  %s: %s (%s)\n", msg(s.g.locale, "ログイントークン", "login token"), token,
		msg(s.g.locale, "コンソールと REST の Bearer トークン、承認者 "+st.User, "the console's and REST's bearer token, approver "+st.User))
	if s.g.statePath != "" {
		fmt.Fprintf(w, "  %s: %s\n", msg(s.g.locale, "状態ファイル（jobs / approve / deny / status が使います）", "state file (read by jobs / approve / deny / status)"), s.g.statePath)
	}
	if _, ok := s.listeners["gateway-line-public"]; ok {
		fmt.Fprintf(w, "  LINE webhook: %s%s\n", s.services.GatewayLine.PublicURL, gatewayline.WebhookPath)
	}
	if _, ok := s.listeners["gateway-slack-public"]; ok {
		fmt.Fprintf(w, "  Slack events: %s%s   interactivity: %s%s\n", s.services.GatewaySlack.PublicURL, gatewayslack.EventsPath,
			s.services.GatewaySlack.PublicURL, gatewayslack.InteractivePath)
	}
	if s.offline {
		fmt.Fprintln(w, msg(s.g.locale,
			"  ⚠ Ollama に接続できないため、オフラインプロバイダで動いています。これはモデルではありません：答えは入力から機械的に作られます。",
			"  ⚠ Ollama is not reachable: running on the offline provider. It is not a model: answers are derived mechanically from your input."))
	}
	for _, n := range s.notes {
		fmt.Fprintln(w, "  · "+n)
	}
	if !interactive {
		fmt.Fprintln(w, msg(s.g.locale, "  サービスとして動いています（端末のチャットなし）。SIGTERM で停止します。",
			"  Running as a service (no terminal chat). SIGTERM stops it."))
	}
}

// runState is how the other terminals reach this suite.
func (s *suite) runState() runState {
	return runState{
		RESTURL: s.services.Approval.PublicURL + "/v1/", ConsoleURL: s.services.Approval.PublicURL + "/ui/",
		Token: s.loginToken, User: s.user,
		HeartbeatURL: s.services.Heartbeat.URL, ExecutorURL: s.services.Executor.URL,
		DataDir: absPath(s.dataDir), PID: os.Getpid(), StartedAt: s.started, Version: buildinfo.Get().String(),
	}
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func (s *suite) close() {
	for n := range s.listeners {
		s.closeListener(n)
	}
	if s.log != nil {
		_ = s.log.Close()
	}
	if s.lock != nil {
		_ = s.lock.Close()
	}
}

func appendUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

func msg(locale, ja, en string) string {
	if locale == "en" {
		return en
	}
	return ja
}
