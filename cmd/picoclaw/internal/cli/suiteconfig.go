package cli

import (
	"errors"
	"os"
	"path/filepath"
	"sort"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
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

// suiteConfigs is every service's configuration: the suite's one file read eight ways.
type suiteConfigs struct {
	ap approval.Config
	hb heartbeat.Config
	ex executor.Config
	co coderorder.Config
	rs routershiro.Config
	cm chatmio.Config
	gl gatewayline.Config
	gs gatewayslack.Config
}

// serviceConfig is one service's configuration, with its common part and its wiring.
type serviceConfig struct {
	name   string
	cfg    config.Validator
	common *config.Common
	wiring *rpcserver.Wiring
}

func defaultSuiteConfigs() *suiteConfigs {
	return &suiteConfigs{ap: approval.DefaultConfig(), hb: heartbeat.DefaultConfig(), ex: executor.DefaultConfig(),
		co: coderorder.DefaultConfig(), rs: routershiro.DefaultConfig(), cm: chatmio.DefaultConfig(),
		gl: gatewayline.DefaultConfig(), gs: gatewayslack.DefaultConfig()}
}

// each lists the configurations in the order the suite starts the services.
func (c *suiteConfigs) each() []serviceConfig {
	return []serviceConfig{
		{svcauth.Approval, &c.ap, &c.ap.Common, &c.ap.Wiring}, {svcauth.Heartbeat, &c.hb, &c.hb.Common, &c.hb.Wiring},
		{svcauth.Executor, &c.ex, &c.ex.Common, &c.ex.Wiring}, {svcauth.CoderOrder, &c.co, &c.co.Common, &c.co.Wiring},
		{svcauth.RouterShiro, &c.rs, &c.rs.Common, &c.rs.Wiring}, {svcauth.ChatMio, &c.cm, &c.cm.Common, &c.cm.Wiring},
		{svcauth.GatewayLine, &c.gl, &c.gl.Common, &c.gl.Wiring}, {svcauth.GatewaySlack, &c.gs, &c.gs.Common, &c.gs.Wiring},
	}
}

// schema is every key the suite's file may hold, from the services' own Config types.
func (c *suiteConfigs) schema() *config.Schema {
	var all []any
	for _, s := range c.each() {
		all = append(all, s.cfg)
	}
	return config.SchemaOf(all...)
}

// load reads the file at path (none when empty) and the environment into every configuration,
// without validating. Each problem is reported once (the eight services share the common keys),
// all of them joined.
func (c *suiteConfigs) load(path string, lookup config.LookupFunc) error {
	var data []byte
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return configReadError(path, err)
		}
	}
	known := c.schema()
	var problems uniqueErrors
	for _, s := range c.each() {
		problems.add(config.DecodeWith(data, s.cfg, known))
		problems.add(config.ApplyEnv(s.cfg, lookup))
	}
	return problems.err()
}

// validate checks every configuration that runs, each problem once.
func (c *suiteConfigs) validate(line, slack bool) error {
	var problems uniqueErrors
	for _, s := range c.each() {
		if (!line && s.name == svcauth.GatewayLine) || (!slack && s.name == svcauth.GatewaySlack) {
			continue
		}
		problems.add(s.cfg.Validate())
	}
	return problems.err()
}

// embedded are the settings `picoclaw run` puts over the file: one machine, one data directory.
type embedded struct {
	dataDir  string
	services config.Services
	keys     map[string]svcauth.KeyPair
	user     string
	// auditKey is the audit log's key when the environment gives none.
	auditKey string
	// loginToken is the terminal user's REST and console token.
	loginToken string
	offline    bool
	lookupEnv  func(string) string
}

// embed applies the embedded topology and stores: every service on its loopback port, the
// state and the audit log in SQLite files under the data directory, generated credentials.
func (c *suiteConfigs) embed(e embedded) {
	wire := func(name string, cm *config.Common) {
		cm.Services = e.services
		// Sessions, queues, counters and the Auto-Approve cache live in one SQLite file, durable
		// at every commit; no Redis is needed.
		cm.State = config.State{Engine: config.StateSQLite, Path: filepath.Join(e.dataDir, "state.db"), Sync: "normal"}
		cm.Auth = authFor(e.keys, name)
	}
	for _, s := range c.each() {
		wire(s.name, s.common)
	}

	ap := &c.ap.Approval
	ap.Store = approval.StoreSQLite
	ap.SQLitePath = filepath.Join(e.dataDir, "audit.db")
	if !ap.Audit.Key.Set() {
		ap.Audit.Key = config.Secret(e.auditKey)
	}
	ap.Approvers.CLI = appendUnique(ap.Approvers.CLI, e.user)
	if e.loginToken != "" {
		// The terminal user approves over REST and in the console too, next to any approvers the
		// environment lists.
		tokens := e.user + ":" + e.loginToken
		if ap.Approvers.Tokens.Set() {
			tokens = ap.Approvers.Tokens.Value() + "," + tokens
		}
		ap.Approvers.Tokens = config.Secret(tokens)
	}
	// The terminal user owns this suite: they may switch Auto-Approve on (it stays off until they do).
	ap.AutoApprove.Enabled = true

	// Kept images (images.keep) live in the data directory unless the file names a place.
	if c.ap.Images.KeepDir == "" {
		c.ap.Images.KeepDir = filepath.Join(e.dataDir, "images")
	}
	c.ex.Executor.Workspace = filepath.Join(e.dataDir, "workspace")
	c.ex.Executor.StateDir = filepath.Join(e.dataDir, "executor")

	if e.offline {
		c.cm.Agents.Chat.Provider = llm.ProviderOffline
		c.rs.Agents.Worker.Provider = llm.ProviderOffline
	}
	// An order without its API key (or any order, with no local model either) proposes through
	// the offline provider, which labels every answer as not coming from a model.
	co := &c.co.Orders
	for _, o := range []*coderorder.Order{&co.Order1, &co.Order2, &co.Order3, co.Coder1, co.Coder2, co.Coder3} {
		if o == nil {
			continue
		}
		if key := o.Config.WithDefaults().APIKeyEnv; e.offline || (llm.IsCloud(o.Provider) && e.lookupEnv(key) == "") {
			o.Provider = llm.ProviderOffline
		}
	}
}

// lineConfigured and slackConfigured: without its channel's secrets a gateway does not run.
func (c *suiteConfigs) lineConfigured() bool {
	return c.gl.Line.ChannelSecret.Set() && c.gl.Line.ChannelAccessToken.Set()
}

func (c *suiteConfigs) slackConfigured() bool {
	return c.gs.Slack.SigningSecret.Set() && c.gs.Slack.BotToken.Set()
}

// uniqueErrors collects problems, each once, in a stable order.
type uniqueErrors struct {
	seen map[string]bool
	list []error
}

func (u *uniqueErrors) add(err error) {
	if err == nil {
		return
	}
	for _, e := range flatten(err) {
		if u.seen == nil {
			u.seen = map[string]bool{}
		}
		if !u.seen[e.Error()] {
			u.seen[e.Error()] = true
			u.list = append(u.list, e)
		}
	}
}

func (u *uniqueErrors) err() error {
	if len(u.list) == 0 {
		return nil
	}
	sort.SliceStable(u.list, func(i, j int) bool { return u.list[i].Error() < u.list[j].Error() })
	return errors.Join(u.list...)
}

// flatten lists the errors joined in err.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
