package service

import (
	"fmt"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/coder-order/internal/domain"
)

// Order is one orders.<id> entry: an alias, a switch and the model settings.
type Order struct {
	Alias      string `yaml:"alias"`
	Enabled    bool   `yaml:"enabled"`
	llm.Config `yaml:",inline"`
}

// Orders is the orders section.
type Orders struct {
	// Default is what a plain CODE route means (order1..3 or coder1..3).
	Default string `yaml:"default"`
	Order1  Order  `yaml:"order1"`
	Order2  Order  `yaml:"order2"`
	Order3  Order  `yaml:"order3"`
	// Coder1..3 are the legacy names; when present they override the matching orderN keys.
	Coder1 *Order `yaml:"coder1"`
	Coder2 *Order `yaml:"coder2"`
	Coder3 *Order `yaml:"coder3"`
	// Prices is the per-model price table (USD per million tokens), shared by every order;
	// an order's own prices entry for its model wins.
	Prices map[string]llm.Price `yaml:"prices"`
}

// Coders is the coders section: what the orders see of the repository.
type Coders struct {
	// ContextTokens is the budget of each proposal's context pack (repository map and files,
	// read through the executor's read-only view); 0 = no repository context.
	ContextTokens int `yaml:"context_tokens"`
	// WorkspaceTimeout bounds each call to the executor's view.
	WorkspaceTimeout time.Duration `yaml:"workspace_timeout"`
	// Tools are the read-only workspace tools orders with a tool-calling provider use after
	// the context pack: max_calls (0 = off), timeout and max_tokens of the tool phase.
	Tools llm.ToolsConfig `yaml:"tools"`
}

// Deliberation is the deliberation section.
type Deliberation struct {
	MaxParallelOrders int  `yaml:"max_parallel_orders"`
	TimeoutSec        int  `yaml:"timeout_sec"`
	AutoOnHighRisk    bool `yaml:"auto_on_high_risk"`
}

// ApprovalLimits are the keys of the approval section coder-order reads, so the refusal before
// calling and the approval policy use the same limits.
type ApprovalLimits struct {
	CostLimitUSD float64 `yaml:"cost_limit_usd"`
	TokenLimit   int64   `yaml:"token_limit"`
}

// DefaultOrders returns the defaults of SPEC §1 and §7.
func DefaultOrders() Orders {
	return Orders{
		Default: domain.Order2,
		Order1:  Order{Alias: "Aka", Enabled: true, Config: llm.Config{Provider: llm.ProviderDeepSeek, Model: "deepseek-chat", MaxTokens: 4000, TimeoutSec: 60, RetryMax: 2}},
		Order2:  Order{Alias: "Ao", Enabled: true, Config: llm.Config{Provider: llm.ProviderOpenAI, Model: "gpt-4o", MaxTokens: 8000, TimeoutSec: 60, RetryMax: 2}},
		Order3:  Order{Alias: "Gin", Enabled: true, Config: llm.Config{Provider: llm.ProviderAnthropic, Model: "claude-sonnet-4-5", MaxTokens: 16000, TimeoutSec: 60, RetryMax: 2}},
		Prices: map[string]llm.Price{
			"deepseek-chat":     {InputPerMTok: 0.27, OutputPerMTok: 1.10},
			"gpt-4o":            {InputPerMTok: 2.50, OutputPerMTok: 10.00},
			"claude-sonnet-4-5": {InputPerMTok: 3.00, OutputPerMTok: 15.00},
		},
	}
}

// resolved returns order1..3 with legacy overrides applied.
func (o Orders) resolved() map[string]Order {
	m := map[string]Order{domain.Order1: o.Order1, domain.Order2: o.Order2, domain.Order3: o.Order3}
	for id, legacy := range map[string]*Order{domain.Order1: o.Coder1, domain.Order2: o.Coder2, domain.Order3: o.Coder3} {
		if legacy != nil {
			m[id] = mergeOrder(m[id], *legacy)
		}
	}
	return m
}

// mergeOrder lays the set fields of src over dst.
func mergeOrder(dst, src Order) Order {
	if src.Alias != "" {
		dst.Alias = src.Alias
	}
	// A legacy entry is an explicit configuration; its enabled flag wins.
	dst.Enabled = src.Enabled
	s, d := src.Config, &dst.Config
	if s.Provider != "" {
		d.Provider = s.Provider
	}
	if s.Model != "" {
		d.Model = s.Model
	}
	if s.BaseURL != "" {
		d.BaseURL = s.BaseURL
	}
	if s.APIKeyEnv != "" {
		d.APIKeyEnv = s.APIKeyEnv
	}
	if s.MaxTokens != 0 {
		d.MaxTokens = s.MaxTokens
	}
	if s.TimeoutSec != 0 {
		d.TimeoutSec = s.TimeoutSec
	}
	if s.RetryMax != 0 {
		d.RetryMax = s.RetryMax
	}
	if s.NumCtx != 0 {
		d.NumCtx = s.NumCtx
	}
	if len(s.Prices) > 0 {
		d.Prices = s.Prices
	}
	return dst
}

// orderConfig is the llm.Config of order id, with the price table and the ollama section
// merged in.
func (c *Config) orderConfig(o Order) llm.Config {
	lc := o.Config.WithOllama(c.Ollama)
	prices := map[string]llm.Price{}
	for k, v := range c.Orders.Prices {
		prices[k] = v
	}
	for k, v := range o.Prices {
		prices[k] = v
	}
	lc.Prices = prices
	return lc.WithDefaults()
}

func (c *Config) validateOrders() error {
	var errs config.Errors
	if _, err := domain.NormalizeOrder(c.Orders.Default, ""); err != nil {
		errs.Addf("orders.default", "must be order1, order2 or order3, got %q", c.Orders.Default)
	}
	for id, o := range c.Orders.resolved() {
		if !o.Enabled {
			continue
		}
		lc := c.orderConfig(o)
		errs.Add(config.Prefix("orders."+id, lc.Validate()))
		if _, ok := lc.Price(); !ok && llm.IsCloud(lc.Provider) {
			errs.Addf("orders.prices", "no price for model %q of %s: cost limits cannot be enforced without one", lc.Model, id)
		}
	}
	for model, p := range c.Orders.Prices {
		if p.InputPerMTok < 0 || p.OutputPerMTok < 0 {
			errs.Addf("orders.prices."+model, "prices must not be negative")
		}
	}
	if c.Deliberation.MaxParallelOrders < 1 || c.Deliberation.MaxParallelOrders > 3 {
		errs.Addf("deliberation.max_parallel_orders", "must be between 1 and 3, got %d", c.Deliberation.MaxParallelOrders)
	}
	if c.Deliberation.TimeoutSec <= 0 {
		errs.Addf("deliberation.timeout_sec", "must be positive, got %d", c.Deliberation.TimeoutSec)
	}
	if c.Approval.CostLimitUSD < 0 {
		errs.Addf("approval.cost_limit_usd", "must not be negative, got %v", c.Approval.CostLimitUSD)
	}
	if c.Approval.TokenLimit < 0 {
		errs.Addf("approval.token_limit", "must not be negative, got %d", c.Approval.TokenLimit)
	}
	return errs.Err()
}

func (o Order) String() string { return fmt.Sprintf("%s (%s/%s)", o.Alias, o.Provider, o.Model) }
