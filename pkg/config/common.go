package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Endpoint is where a service listens and how its peers reach it.
type Endpoint struct {
	// Listen is the address the service binds, e.g. ":9004" or "127.0.0.1:9004".
	Listen string `yaml:"listen"`
	// URL is how other services call it, e.g. "http://127.0.0.1:9004".
	URL string `yaml:"url"`
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
	return Services{
		GatewayLine:  ep(8080),
		GatewaySlack: ep(8081),
		ChatMio:      ep(9001),
		RouterShiro:  ep(9002),
		CoderOrder:   ep(9003),
		Approval:     ep(9004),
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
	// InternalToken is the suite's shared service credential: when set, every Connect API of the
	// suite refuses calls that do not carry it, so only the suite's own services (and the
	// picoclaw CLI given the same token) reach them even where their ports are reachable.
	InternalToken Secret `yaml:"-" env:"PICOCLAW_INTERNAL_TOKEN"`
	// HeartbeatSender is the sender's part of the heartbeat section.
	HeartbeatSender Heartbeat `yaml:"heartbeat"`
	Debug           Debug     `yaml:"debug"`
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
	if c.Redis.Addr == "" {
		errs.Addf("redis.addr", "must be set")
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
