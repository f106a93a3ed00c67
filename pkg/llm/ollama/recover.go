package ollama

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/redact"
)

// Restart timings.
const (
	// DefaultRestartCooldown is how long after a restart no other one runs: a model that is
	// still missing (or a server still down) after a restart will not be cured by the next one,
	// and a turn the gateway retries must not restart Ollama every time it comes back.
	DefaultRestartCooldown = 2 * time.Minute
	// DefaultRestartSettle bounds the wait for the server to answer again after the command.
	DefaultRestartSettle = 30 * time.Second
	// restartCommandTimeout bounds the restart command itself.
	restartCommandTimeout = time.Minute
)

// ErrNoRestartCommand: no restart_command is configured (a nil Restarter).
var ErrNoRestartCommand = errors.New("llm: ollama restart_command not configured")

// ErrRestartCoolingDown: a restart ran shortly before the failed call began, so none runs now.
var ErrRestartCoolingDown = errors.New("ollama: restarted recently; not restarting again yet")

// RestarterConfig configures a Restarter.
type RestarterConfig struct {
	// Command is restart_command, run as an argument vector (never through a shell).
	Command []string
	// BaseURL is the server the command restarts; after it runs, /api/tags is polled until the
	// server answers (at most Settle).
	BaseURL  string
	Cooldown time.Duration
	Settle   time.Duration
	Logger   *slog.Logger
	// HTTPClient, Now and Sleep are replaced in tests.
	HTTPClient *http.Client
	Now        func() time.Time
	Sleep      llm.SleepFunc
}

// Restarter runs restart_command for every model client of one Ollama server: one restart at a
// time, serving every caller whose call failed before it finished, and none again within the
// cool-down. The embedded suite shares one between chat-mio and router-shiro.
type Restarter struct {
	cfg RestarterConfig
	api *API
	// sem is the lock a caller waits on (with its context) while another restarts.
	sem  chan struct{}
	mu   sync.Mutex
	gen  uint64
	last time.Time
}

// NewRestarter returns nil when no command is configured (a nil Restarter never restarts).
func NewRestarter(cfg RestarterConfig) *Restarter {
	if len(cfg.Command) == 0 {
		return nil
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = DefaultRestartCooldown
	}
	if cfg.Settle <= 0 {
		cfg.Settle = DefaultRestartSettle
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = llm.Sleep
	}
	return &Restarter{cfg: cfg, api: NewAPI(cfg.BaseURL, cfg.HTTPClient), sem: make(chan struct{}, 1)}
}

// Generation counts the restarts run so far; a caller reads it before its call and hands it to
// Restart when the call fails.
func (r *Restarter) Generation() uint64 {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gen
}

// Restart restarts Ollama for a call that began at generation gen and failed with reason:
// when a restart finished since gen it returns at once (that restart serves this caller too);
// when one ran within the cool-down before gen it returns ErrRestartCoolingDown; otherwise it
// runs the command, waits for the server to answer and returns the command's error, if any.
// log, when set, replaces the configured logger (the calling service's).
func (r *Restarter) Restart(ctx context.Context, gen uint64, model, reason string, log *slog.Logger) error {
	if r == nil {
		return ErrNoRestartCommand
	}
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-r.sem }()
	r.mu.Lock()
	served := r.gen != gen
	cooling := !r.last.IsZero() && r.cfg.Now().Sub(r.last) < r.cfg.Cooldown
	r.mu.Unlock()
	if served {
		return nil
	}
	if cooling {
		return ErrRestartCoolingDown
	}
	if log == nil {
		log = r.cfg.Logger
	}
	command := redact.Secrets(strings.Join(r.cfg.Command, " "))
	log.WarnContext(ctx, "llm.ollama_restart", slog.String("command", command), slog.String("model", model),
		slog.String("base_url", redact.Secrets(r.cfg.BaseURL)), slog.String("reason", redact.Secrets(reason)))
	start := r.cfg.Now()
	err := runRestart(ctx, r.cfg.Command)
	r.mu.Lock()
	r.gen++
	r.last = r.cfg.Now()
	r.mu.Unlock()
	if err != nil {
		log.ErrorContext(ctx, "llm.ollama_restart_failed", slog.String("command", command), slog.String("error", redact.Secrets(err.Error())))
		return err
	}
	up := r.waitUp(ctx)
	log.InfoContext(ctx, "llm.ollama_restarted", slog.String("command", command), slog.Bool("answering", up),
		slog.Int64("took_ms", r.cfg.Now().Sub(start).Milliseconds()))
	return nil
}

// waitUp polls /api/tags until the server answers or Settle passes.
func (r *Restarter) waitUp(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Settle)
	defer cancel()
	for {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := r.api.List(actx)
		acancel()
		if err == nil {
			return true
		}
		if r.cfg.Sleep(ctx, 250*time.Millisecond) != nil {
			return false
		}
	}
}

// restartEnv is what the restart command sees of the service's environment: what systemctl
// (--user), service(8), launchctl or ollama need, and none of the service's keys and tokens.
var restartEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "TMPDIR",
	"XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "OLLAMA_HOST", "OLLAMA_MODELS"}

// runRestart runs argv (never through a shell, with a scrubbed environment) and returns its
// output on failure.
func runRestart(ctx context.Context, argv []string) error {
	ctx, cancel := context.WithTimeout(ctx, restartCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{}
	for _, name := range restartEnv {
		if v, ok := os.LookupEnv(name); ok {
			cmd.Env = append(cmd.Env, name+"="+v)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		text := strings.TrimSpace(redact.Secrets(string(out)))
		if len(text) > 500 {
			text = text[:500]
		}
		return &restartError{program: argv[0], err: err, output: text}
	}
	return nil
}

type restartError struct {
	program, output string
	err             error
}

func (e *restartError) Error() string {
	return "ollama restart " + e.program + ": " + e.err.Error() + ": " + e.output
}

func (e *restartError) Unwrap() error { return e.err }

// Guard is a local model client that recovers from the two failures a restart can cure: the
// model missing on the server (404 model not found) and the server unreachable (connection
// refused or reset). On either it has the Restarter restart Ollama once (shared by concurrent
// callers, never again within the cool-down) and tries the call once more. What still fails is
// a *llm.LocalModelError (llm.ErrModelUnavailable): the caller tells the user what to run
// instead of retrying. Without a restart command a missing model is a LocalModelError at once
// and an unreachable server stays llm.ErrUnavailable (the caller's own retry policy applies).
type Guard struct {
	llm.Client
	restarter *Restarter
	baseURL   string
	log       *slog.Logger
}

// NewGuard wraps c (an Ollama client of the server at baseURL); r may be nil. Restarts are
// logged on log (nil: the Restarter's logger).
func NewGuard(c llm.Client, r *Restarter, baseURL string, log *slog.Logger) *Guard {
	return &Guard{Client: c, restarter: r, baseURL: baseURL, log: log}
}

// Unwrap is the guarded client.
func (g *Guard) Unwrap() llm.Client { return g.Client }

// Chat implements llm.Client.
func (g *Guard) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	gen := g.restarter.Generation()
	resp, err := g.Client.Chat(ctx, req)
	missing, down := failure(err)
	if !missing && !down || ctx.Err() != nil {
		return resp, err
	}
	if g.restarter == nil {
		if missing {
			return nil, g.fail(err, true, false)
		}
		return nil, err
	}
	if rerr := g.restarter.Restart(ctx, gen, g.Model(), err.Error(), g.log); rerr != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		// A restart that just ran (or could not run) did not cure it: say so now.
		return nil, g.fail(errors.Join(err, rerr), missing, true)
	}
	resp, err = g.Client.Chat(ctx, req)
	if m, d := failure(err); (m || d) && ctx.Err() == nil {
		return nil, g.fail(err, m, true)
	}
	return resp, err
}

func (g *Guard) fail(err error, missing, restarted bool) error {
	return &llm.LocalModelError{Model: g.Model(), BaseURL: g.baseURL, Missing: missing, Restarted: restarted, Err: err}
}

// failure classifies a call's error: the model missing, or the server unreachable.
func failure(err error) (missing, down bool) {
	if err == nil {
		return false, false
	}
	if _, ok := errors.AsType[*llm.LocalModelError](err); ok {
		return false, false
	}
	return errors.Is(err, llm.ErrModelUnavailable), errors.Is(err, llm.ErrUnreachable)
}

// Guarded wraps c in a Guard when it is an Ollama client (other clients are returned as they
// are). r is the Restarter to share (the embedded suite's, or one for all the models of a
// service); when it is nil, or restarts another server or with another command than c's
// configuration names, c gets one of its own restart_command (none when it is empty).
func Guarded(c llm.Client, r *Restarter, log *slog.Logger) llm.Client {
	oc, ok := c.(*Client)
	if !ok {
		return c
	}
	if !r.Serves(oc.cfg) {
		r = NewRestarter(RestarterConfig{Command: oc.cfg.RestartCommand, BaseURL: oc.cfg.BaseURL, Logger: log})
	}
	return NewGuard(c, r, oc.cfg.BaseURL, log)
}

// Serves reports whether r restarts the server of cfg with cfg's restart_command, so that a
// model of cfg may share it.
func (r *Restarter) Serves(cfg llm.Config) bool {
	return r != nil && strings.TrimRight(r.cfg.BaseURL, "/") == strings.TrimRight(cfg.BaseURL, "/") &&
		slices.Equal(r.cfg.Command, cfg.RestartCommand)
}
