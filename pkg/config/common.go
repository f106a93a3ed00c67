package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/replica"
)

// Endpoint is where a service listens and how its peers reach it.
type Endpoint struct {
	// Listen is the address the service binds, e.g. ":9004" or "127.0.0.1:9004".
	Listen string `yaml:"listen"`
	// URL is how other services call it, e.g. "http://127.0.0.1:9004".
	URL string `yaml:"url"`
	// PublicListen is the separate public listener of the services that have one (the
	// gateways' webhooks, approval's REST API and console); the internal RPC listener above
	// serves only the suite.
	PublicListen string `yaml:"public_listen"`
	// PublicURL is how people and tools (the picoclaw CLI) reach the public listener.
	PublicURL string `yaml:"public_url"`
}

// ValidatePublic checks the public listener of a service that has one.
func (e Endpoint) ValidatePublic(name string) error {
	var errs Errors
	if e.PublicListen == "" {
		errs.Addf("services."+name+".public_listen", "must be set")
	}
	if u, err := url.Parse(e.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs.Addf("services."+name+".public_url", "must be an http(s) URL, got %q", e.PublicURL)
	}
	return errs.Err()
}

// Services is the suite's topology: every service's endpoint.
type Services struct {
	GatewayLine  Endpoint `yaml:"gateway-line"`
	GatewaySlack Endpoint `yaml:"gateway-slack"`
	ChatMio      Endpoint `yaml:"chat-mio"`
	RouterShiro  Endpoint `yaml:"router-shiro"`
	CoderOrder   Endpoint `yaml:"coder-order"`
	Approval     Endpoint `yaml:"approval"`
	Executor     Endpoint `yaml:"executor"`
	Heartbeat    Endpoint `yaml:"heartbeat"`
	// CLI is the terminal channel's notification endpoint (served by `picoclaw chat` / `run`),
	// where chat-mio pushes results for cli: sessions.
	CLI Endpoint `yaml:"cli"`
}

// DefaultServices returns the default ports of SPEC §2 on the loopback interface.
func DefaultServices() Services {
	ep := func(port int) Endpoint {
		return Endpoint{Listen: fmt.Sprintf("127.0.0.1:%d", port), URL: fmt.Sprintf("http://127.0.0.1:%d", port)}
	}
	public := func(e Endpoint, port int) Endpoint {
		e.PublicListen, e.PublicURL = fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("http://127.0.0.1:%d", port)
		return e
	}
	return Services{
		GatewayLine:  public(ep(9007), 8080),
		GatewaySlack: public(ep(9008), 8081),
		ChatMio:      ep(9001),
		RouterShiro:  ep(9002),
		CoderOrder:   ep(9003),
		Approval:     public(ep(9004), 8090),
		Executor:     ep(9005),
		Heartbeat:    ep(9006),
		CLI:          ep(9010),
	}
}

// Redis is the connection to Redis (sessions, streams, JobID counters, Auto-Approve).
type Redis struct {
	Addr     string `yaml:"addr"`
	DB       int    `yaml:"db"`
	Password Secret `yaml:"-" env:"REDIS_PASSWORD"`
	// KeyPrefix namespaces every key the suite writes, so several suites (or tests) can share
	// one server.
	KeyPrefix string `yaml:"key_prefix"`
}

// State engines.
const (
	// StateRedis keeps sessions, queues, counters and grants in Redis (redis.addr).
	StateRedis = "redis"
	// StateSQLite keeps them in one SQLite file (state.path): the embedded single-machine engine.
	StateSQLite = "sqlite"
)

// State selects the engine of the state Redis holds in a distributed deployment.
type State struct {
	// Engine is redis (default) or sqlite.
	Engine string `yaml:"engine"`
	// Path is the SQLite file (engine sqlite).
	Path string `yaml:"path"`
	// Sync is normal (a commit survives a crash of the process) or full (also a power loss).
	Sync string `yaml:"sync"`
}

// SQLite reports whether the state lives in the embedded SQLite engine.
func (s State) SQLite() bool { return s.Engine == StateSQLite }

// Validate names the offending key.
func (s State) Validate(redis Redis) error {
	var errs Errors
	switch s.Engine {
	case StateRedis:
		if redis.Addr == "" {
			errs.Addf("redis.addr", "must be set")
		}
	case StateSQLite:
		if s.Path == "" {
			errs.Addf("state.path", "must be set when state.engine is sqlite")
		}
	default:
		errs.Addf("state.engine", "must be redis or sqlite, got %q", s.Engine)
	}
	if s.Sync != "normal" && s.Sync != "full" {
		errs.Addf("state.sync", "must be normal or full, got %q", s.Sync)
	}
	return errs.Err()
}

// Postgres is the connection to the audit database.
type Postgres struct {
	DSN Secret `yaml:"-" env:"PICOCLAW_POSTGRES_DSN"`
	// MigrateDSN connects as the owner of the tables for migrations; the service then runs over
	// DSN as a role that cannot change the audit log. Empty: DSN migrates too.
	MigrateDSN Secret `yaml:"-" env:"PICOCLAW_POSTGRES_MIGRATE_DSN"`
}

// Heartbeat configures the sender every service runs.
type Heartbeat struct {
	Enabled     bool `yaml:"enabled"`
	IntervalSec int  `yaml:"interval_sec"`
	TimeoutSec  int  `yaml:"timeout_sec"`
}

// Common holds the settings every service reads. Service configs embed it inline.
type Common struct {
	// TimeZone is used for JobIDs and the daily session cutover (IANA name).
	TimeZone string   `yaml:"timezone"`
	Locale   string   `yaml:"locale"`
	LogLevel string   `yaml:"log_level"`
	Services Services `yaml:"services"`
	Redis    Redis    `yaml:"redis"`
	// State selects where the state Redis holds in a distributed deployment lives.
	State State `yaml:"state"`
	// HTTP are the listeners' timeouts and caps.
	HTTP HTTP `yaml:"http"`
	// Auth is this service's identity on internal calls (see pkg/svcauth).
	Auth Auth `yaml:"auth"`
	// HeartbeatSender is the sender's part of the heartbeat section.
	HeartbeatSender Heartbeat `yaml:"heartbeat"`
	Debug           Debug     `yaml:"debug"`
	// Replica names this process among the replicas of its service (PICOCLAW_REPLICA_ID): in
	// heartbeats, as the consumer name of an inbox, as the executor that holds a claim, as the
	// holder of approval's sweeper lease. Empty: a new id per process start (host, pid and a
	// random suffix). Set it only to something unique per replica, e.g. a StatefulSet pod name.
	Replica string `yaml:"replica_id"`
}

// HTTP holds the timeouts and caps every listener of the suite applies.
type HTTP struct {
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	BodyTimeout       time.Duration `yaml:"body_timeout"`
	WriteTimeout      time.Duration `yaml:"write_timeout"`
	IdleTimeout       time.Duration `yaml:"idle_timeout"`
	MaxHeaderBytes    int           `yaml:"max_header_bytes"`
	MaxConns          int           `yaml:"max_conns"`
}

// DefaultHTTP returns the listener defaults: a request's headers within 5 s and its body within
// 30 s, a response within 10 min (a proposal can take minutes), idle connections closed after
// 30 s (each holds a goroutine and its buffers: a burst's connections are let go well within a
// minute of it; the suite's own clients let theirs go after 20 s, before), 64 KiB of headers,
// 1024 connections per listener.
func DefaultHTTP() HTTP {
	return HTTP{ReadHeaderTimeout: 5 * time.Second, BodyTimeout: 30 * time.Second, WriteTimeout: 10 * time.Minute,
		IdleTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10, MaxConns: 1024}
}

// Validate names the offending key.
func (h HTTP) Validate() error {
	var errs Errors
	for key, d := range map[string]time.Duration{"http.read_header_timeout": h.ReadHeaderTimeout, "http.body_timeout": h.BodyTimeout,
		"http.write_timeout": h.WriteTimeout, "http.idle_timeout": h.IdleTimeout} {
		if d <= 0 {
			errs.Addf(key, "must be positive, got %s", d)
		}
	}
	if h.MaxHeaderBytes < 1024 {
		errs.Addf("http.max_header_bytes", "must be at least 1024, got %d", h.MaxHeaderBytes)
	}
	if h.MaxConns < 1 {
		errs.Addf("http.max_conns", "must be positive, got %d", h.MaxConns)
	}
	return errs.Err()
}

// Auth is a service's credential: its own Ed25519 key (only from the environment) and the
// public keys of every identity of the suite, as "name=base64" entries.
type Auth struct {
	PublicKeys []string `yaml:"public_keys"`
	ServiceKey Secret   `yaml:"-" env:"PICOCLAW_SERVICE_KEY"`
}

// Debug holds diagnostics that stay off in production.
type Debug struct {
	// Pprof serves net/http/pprof under /debug/pprof/ on every service's listener, for profiling
	// under load. It exposes internals, so never enable it on a listener reachable from outside.
	Pprof bool `yaml:"pprof"`
}

// DefaultCommon returns the defaults of the spec.
func DefaultCommon() Common {
	return Common{
		TimeZone:        "Asia/Tokyo",
		Locale:          "ja",
		LogLevel:        "info",
		Services:        DefaultServices(),
		Redis:           Redis{Addr: "127.0.0.1:6379", KeyPrefix: "picoclaw:"},
		State:           State{Engine: StateRedis, Sync: "normal"},
		HTTP:            DefaultHTTP(),
		HeartbeatSender: Heartbeat{Enabled: true, IntervalSec: 30, TimeoutSec: 60},
	}
}

// Location resolves TimeZone.
func (c Common) Location() (*time.Location, error) {
	return time.LoadLocation(c.TimeZone)
}

// Validate checks the common keys.
func (c Common) Validate() error {
	var errs Errors
	if _, err := time.LoadLocation(c.TimeZone); err != nil || c.TimeZone == "" {
		errs.Addf("timezone", "unknown time zone %q", c.TimeZone)
	}
	if c.Locale != "ja" && c.Locale != "en" {
		errs.Addf("locale", "must be ja or en, got %q", c.Locale)
	}
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		errs.Addf("log_level", "must be debug, info, warn or error, got %q", c.LogLevel)
	}
	for name, ep := range c.Services.byName() {
		if ep.Listen == "" {
			errs.Addf("services."+name+".listen", "must be set")
		}
		if u, err := url.Parse(ep.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs.Addf("services."+name+".url", "must be an http(s) URL, got %q", ep.URL)
		}
	}
	errs.Add(c.HTTP.Validate())
	errs.Add(c.State.Validate(c.Redis))
	if c.Replica != "" && !replica.Valid(c.Replica) {
		errs.Addf("replica_id", "must be 1 to %d letters, digits, '.', '_', '@' or '-', got %q", replica.MaxLen, c.Replica)
	}
	if c.HeartbeatSender.IntervalSec <= 0 {
		errs.Addf("heartbeat.interval_sec", "must be positive, got %d", c.HeartbeatSender.IntervalSec)
	}
	if c.HeartbeatSender.TimeoutSec <= c.HeartbeatSender.IntervalSec {
		errs.Addf("heartbeat.timeout_sec", "must be greater than interval_sec (%d), got %d",
			c.HeartbeatSender.IntervalSec, c.HeartbeatSender.TimeoutSec)
	}
	return errs.Err()
}

// Endpoint returns the endpoint of the service called name (services.<name>).
func (s Services) Endpoint(name string) (Endpoint, bool) {
	ep, ok := s.byName()[name]
	return ep, ok
}

func (s Services) byName() map[string]Endpoint {
	return map[string]Endpoint{
		"gateway-line":  s.GatewayLine,
		"gateway-slack": s.GatewaySlack,
		"chat-mio":      s.ChatMio,
		"router-shiro":  s.RouterShiro,
		"coder-order":   s.CoderOrder,
		"approval":      s.Approval,
		"executor":      s.Executor,
		"heartbeat":     s.Heartbeat,
		"cli":           s.CLI,
	}
}

// SQLiteOnlyTag is the build tag of the embedded build (`picoclaw`): it links neither the
// Redis client nor the Postgres driver, so the binary holds only the engine it runs on.
const SQLiteOnlyTag = "sqliteonly"

// ServerOnlyTag is the build tag of the service binaries as released (`make build`, the images):
// the mirror of SQLiteOnlyTag, it leaves the SQLite engine out (modernc.org/sqlite, pkg/sqlstate
// and every store on it), since a separate deployment runs on Redis and Postgres.
const ServerOnlyTag = "serveronly"

// NotLinked is the error of a binary built with SQLiteOnlyTag or ServerOnlyTag asked for an
// engine it does not hold: sqlite names the tag that left SQLite out, anything else (redis,
// postgres) the one that left the servers' clients out.
func NotLinked(what string) error {
	if what == StateSQLite {
		return fmt.Errorf("%s is not linked into this binary (built with -tags %s, for Redis and Postgres only); use picoclaw, or a build without -tags %s, for %s",
			what, ServerOnlyTag, ServerOnlyTag, what)
	}
	return fmt.Errorf("%s is not linked into this binary (built with -tags %s for state.engine %s); use the service binaries for %s",
		what, SQLiteOnlyTag, StateSQLite, what)
}

// CheckLinked is the error naming key when its value, engine, is SQLite and this binary was
// built without it (ServerOnlyTag): the service then refuses to start instead of failing on
// its first write.
func CheckLinked(key, engine string) error {
	if engine != StateSQLite || SQLiteLinked {
		return nil
	}
	return &KeyError{Key: key, Msg: NotLinked(StateSQLite).Error()}
}
