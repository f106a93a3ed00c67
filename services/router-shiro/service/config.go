package service

import (
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

// Routing is the routing: section.
type Routing struct {
	// DefaultCodeOrder is the order a plain CODE route asks (order1..3, legacy coder1..3).
	DefaultCodeOrder string     `yaml:"default_code_order"`
	RulesFile        string     `yaml:"rules_file"`
	Classifier       Classifier `yaml:"classifier"`
	// Signals decides plain conversation (a short message without code, URL, file name or
	// request phrasing) as CHAT without asking the classifier: one model call per chat message.
	Signals Signals `yaml:"signals"`
}

// Signals is routing.signals.
type Signals struct {
	Enabled bool `yaml:"enabled"`
}

// Classifier is routing.classifier.
type Classifier struct {
	Enabled              bool    `yaml:"enabled"`
	MinConfidence        float64 `yaml:"min_confidence"`
	MinConfidenceForCode float64 `yaml:"min_confidence_for_code"`
	// TimeoutSec bounds the one classifier call per input.
	TimeoutSec int `yaml:"timeout_sec"`
}

// Loop is the loop: section (SPEC §5).
type Loop struct {
	MaxLoops  int `yaml:"max_loops"`
	MaxMillis int `yaml:"max_millis"`
	// MinConfidence: a worker that wants another loop with less confidence asks the user first.
	MinConfidence float64 `yaml:"min_confidence"`
	// HistoryTurns is how many earlier turns go to the worker model and the coders.
	HistoryTurns int `yaml:"history_turns"`
	// Tools are the read-only workspace tools of the worker (the executor's view), bounded per
	// worker call like the coders' (max_calls 0 = off).
	Tools llm.ToolsConfig `yaml:"tools"`
}

// Channel is channels.<name>.
type Channel struct {
	// ForcedRoute, when set, replaces rules and classifier for this channel (commands still win).
	ForcedRoute string `yaml:"forced_route"`
}

// Channels is the channels: section.
type Channels struct {
	Line  Channel `yaml:"line"`
	Slack Channel `yaml:"slack"`
	CLI   Channel `yaml:"cli"`
}

// Agent is agents.<id>: an alias and a model configuration.
type Agent struct {
	Alias      string `yaml:"alias"`
	llm.Config `yaml:",inline"`
}

// Agents holds the agents router-shiro runs (only the worker).
type Agents struct {
	Worker Agent `yaml:"worker"`
}

// Deliberation is the part of deliberation: router-shiro reads.
type Deliberation struct {
	// Enabled allows /deliberate (several orders propose at once); false refuses it.
	Enabled    bool `yaml:"enabled"`
	TimeoutSec int  `yaml:"timeout_sec"`
	// AutoOnHighRisk: a high-risk CODE proposal makes the other orders propose too.
	AutoOnHighRisk bool `yaml:"auto_on_high_risk"`
}

func defaultRouting() Routing {
	return Routing{
		DefaultCodeOrder: "order2",
		RulesFile:        "config/rules.yaml",
		Classifier:       Classifier{Enabled: true, MinConfidence: 0.6, MinConfidenceForCode: 0.8, TimeoutSec: 30},
		Signals:          Signals{Enabled: true},
	}
}

func defaultLoop() Loop {
	return Loop{MaxLoops: 3, MaxMillis: 90000, MinConfidence: 0.4, HistoryTurns: 6, Tools: llm.DefaultToolsConfig()}
}

func defaultAgents() Agents {
	return Agents{Worker: Agent{Alias: "Shiro", Config: llm.Config{Provider: llm.ProviderOllama, Model: "worker-v1:latest"}}}
}

func (r Routing) validate(errs *config.Errors) {
	if r.DefaultCodeOrder != "" {
		if _, ok := domain.NormalizeOrder(r.DefaultCodeOrder); !ok {
			errs.Addf("routing.default_code_order", "must be order1, order2 or order3 (or coder1..3), got %q", r.DefaultCodeOrder)
		}
	}
	if r.RulesFile == "" {
		errs.Addf("routing.rules_file", "must be set")
	}
	c := r.Classifier
	if c.MinConfidence < 0 || c.MinConfidence > 1 {
		errs.Addf("routing.classifier.min_confidence", "must be in [0,1], got %g", c.MinConfidence)
	}
	if c.MinConfidenceForCode < 0 || c.MinConfidenceForCode > 1 {
		errs.Addf("routing.classifier.min_confidence_for_code", "must be in [0,1], got %g", c.MinConfidenceForCode)
	} else if c.MinConfidenceForCode < c.MinConfidence {
		errs.Addf("routing.classifier.min_confidence_for_code", "must not be below min_confidence (%g), got %g", c.MinConfidence, c.MinConfidenceForCode)
	}
	if c.TimeoutSec < 0 {
		errs.Addf("routing.classifier.timeout_sec", "must not be negative, got %d", c.TimeoutSec)
	}
}

func (l Loop) validate(errs *config.Errors) {
	if l.MaxLoops < 1 || l.MaxLoops > 20 {
		errs.Addf("loop.max_loops", "must be between 1 and 20, got %d", l.MaxLoops)
	}
	if l.MaxMillis <= 0 {
		errs.Addf("loop.max_millis", "must be positive, got %d", l.MaxMillis)
	}
	if l.MinConfidence < 0 || l.MinConfidence > 1 {
		errs.Addf("loop.min_confidence", "must be in [0,1], got %g", l.MinConfidence)
	}
	if l.HistoryTurns < 0 {
		errs.Addf("loop.history_turns", "must not be negative, got %d", l.HistoryTurns)
	}
	errs.Add(config.Prefix("loop.tools", l.Tools.Validate()))
}

func (c Channels) validate(errs *config.Errors) {
	for name, ch := range c.byName() {
		if ch.ForcedRoute == "" {
			continue
		}
		if _, err := domain.ParseRoute(ch.ForcedRoute); err != nil {
			errs.Addf("channels."+name+".forced_route", "must be empty or a route (CHAT, PLAN, ANALYZE, OPS, RESEARCH, CODE, CODE1..3), got %q", ch.ForcedRoute)
		}
	}
}

func (c Channels) byName() map[string]Channel {
	return map[string]Channel{"line": c.Line, "slack": c.Slack, "cli": c.CLI}
}

func (c Channels) forcedRoutes() map[string]domain.Route {
	out := map[string]domain.Route{}
	for name, ch := range c.byName() {
		if r, err := domain.ParseRoute(ch.ForcedRoute); err == nil {
			out[name] = r
		}
	}
	return out
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

func (a Agent) validate(errs *config.Errors) {
	errs.Add(config.Prefix("agents.worker", a.Config.Validate()))
	// Cloud models serve CODE routes only: the worker sees every PLAN/ANALYZE/OPS/RESEARCH text.
	errs.Add(llm.RequireLocal("agents.worker.provider", a.Config))
}
