package llm

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
)

// Provider names.
const (
	ProviderOllama    = "ollama"
	ProviderOpenAI    = "openai"
	ProviderDeepSeek  = "deepseek"
	ProviderAnthropic = "anthropic"
	ProviderOffline   = "offline"
)

// Default base URLs and API key environment variables per provider.
const (
	DefaultOllamaURL    = "http://127.0.0.1:11434"
	DefaultOpenAIURL    = "https://api.openai.com/v1"
	DefaultDeepSeekURL  = "https://api.deepseek.com"
	DefaultAnthropicURL = "https://api.anthropic.com"
	DefaultNumCtx       = 8192
	// DefaultOllamaParallel is how many calls one model client has under way at Ollama at
	// once (max_parallel).
	DefaultOllamaParallel = 8
)

// Price is what a model costs in US dollars per million tokens.
type Price struct {
	InputPerMTok  float64 `yaml:"input_per_mtok"`
	OutputPerMTok float64 `yaml:"output_per_mtok"`
}

// Cost returns the dollar cost of u at this price.
func (p Price) Cost(u Usage) float64 {
	return (float64(u.InputTokens)*p.InputPerMTok + float64(u.OutputTokens)*p.OutputPerMTok) / 1e6
}

// Config configures one model client. The same shape serves agents.<id>, orders.<id> and the
// ollama section; zero values are filled by WithDefaults.
type Config struct {
	// Provider is ollama, openai, deepseek, anthropic or offline.
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
	// BaseURL of the provider's API (default per provider).
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv names the environment variable holding the key (default OPENAI_API_KEY,
	// DEEPSEEK_API_KEY or ANTHROPIC_API_KEY). Keys are never read from files.
	APIKeyEnv string `yaml:"api_key_env"`
	// MaxTokens caps each answer.
	MaxTokens int `yaml:"max_tokens"`
	// TimeoutSec bounds each HTTP attempt; the caller's context bounds the whole call.
	TimeoutSec int `yaml:"timeout_sec"`
	// RetryMax is how many times a retryable failure (429, 529, 5xx, timeout) is retried.
	RetryMax int `yaml:"retry_max"`
	// NumCtx is sent as options.num_ctx on every Ollama call.
	NumCtx int `yaml:"num_ctx"`
	// KeepAlive is Ollama's keep_alive ("-1" keeps the model loaded).
	KeepAlive string `yaml:"keep_alive"`
	// MaxContext is the largest context length the Ollama health check accepts.
	MaxContext int `yaml:"max_context"`
	// RestartCommand is an optional argv that restarts Ollama (never run through a shell).
	RestartCommand []string `yaml:"restart_command"`
	// MaxParallel bounds the Ollama calls this client has under way at once (default
	// DefaultOllamaParallel; other providers ignore it); the others wait their turn, and an
	// attempt's timeout starts once it has one.
	MaxParallel int `yaml:"max_parallel"`
	// Prices maps model name to price; the entry for Model is used for cost estimates.
	Prices map[string]Price `yaml:"prices"`
}

// IsLocal reports whether a provider keeps text on this machine.
func IsLocal(provider string) bool {
	switch strings.ToLower(provider) {
	case ProviderOllama, ProviderOffline:
		return true
	}
	return false
}

// IsCloud reports whether a provider sends text off the machine.
func IsCloud(provider string) bool {
	switch strings.ToLower(provider) {
	case ProviderOpenAI, ProviderDeepSeek, ProviderAnthropic:
		return true
	}
	return false
}

// WithDefaults returns c with every unset field filled with its provider's default.
func (c Config) WithDefaults() Config {
	c.Provider = strings.ToLower(strings.TrimSpace(c.Provider))
	if c.BaseURL == "" {
		switch c.Provider {
		case ProviderOllama:
			c.BaseURL = DefaultOllamaURL
		case ProviderOpenAI:
			c.BaseURL = DefaultOpenAIURL
		case ProviderDeepSeek:
			c.BaseURL = DefaultDeepSeekURL
		case ProviderAnthropic:
			c.BaseURL = DefaultAnthropicURL
		}
	}
	if c.APIKeyEnv == "" {
		switch c.Provider {
		case ProviderOpenAI:
			c.APIKeyEnv = "OPENAI_API_KEY"
		case ProviderDeepSeek:
			c.APIKeyEnv = "DEEPSEEK_API_KEY"
		case ProviderAnthropic:
			c.APIKeyEnv = "ANTHROPIC_API_KEY"
		}
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = 4096
		if c.Provider == ProviderAnthropic {
			c.MaxTokens = 16000
		}
	}
	if c.TimeoutSec == 0 {
		c.TimeoutSec = 60
	}
	if c.Provider == ProviderOllama {
		if c.NumCtx == 0 {
			c.NumCtx = DefaultNumCtx
		}
		if c.MaxContext == 0 {
			c.MaxContext = c.NumCtx
		}
		if c.KeepAlive == "" {
			c.KeepAlive = "-1"
		}
		if c.MaxParallel == 0 {
			c.MaxParallel = DefaultOllamaParallel
		}
	}
	return c
}

// Validate checks c and names the offending key (relative to the section holding it; wrap
// with config.Prefix).
func (c Config) Validate() error {
	var errs config.Errors
	switch strings.ToLower(c.Provider) {
	case ProviderOllama, ProviderOpenAI, ProviderDeepSeek, ProviderAnthropic, ProviderOffline:
	default:
		errs.Addf("provider", "must be ollama, openai, deepseek, anthropic or offline, got %q", c.Provider)
	}
	if c.Model == "" && strings.ToLower(c.Provider) != ProviderOffline {
		errs.Addf("model", "must be set")
	}
	if c.BaseURL != "" {
		if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs.Addf("base_url", "must be an http(s) URL, got %q", c.BaseURL)
		}
	}
	if c.MaxTokens < 0 {
		errs.Addf("max_tokens", "must not be negative, got %d", c.MaxTokens)
	}
	if c.TimeoutSec < 0 {
		errs.Addf("timeout_sec", "must not be negative, got %d", c.TimeoutSec)
	}
	if c.RetryMax < 0 || c.RetryMax > 10 {
		errs.Addf("retry_max", "must be between 0 and 10, got %d", c.RetryMax)
	}
	if c.MaxParallel < 0 {
		errs.Addf("max_parallel", "must not be negative, got %d", c.MaxParallel)
	}
	if c.NumCtx < 0 {
		errs.Addf("num_ctx", "must not be negative, got %d", c.NumCtx)
	}
	if c.MaxContext < 0 {
		errs.Addf("max_context", "must not be negative, got %d", c.MaxContext)
	}
	if c.NumCtx > 0 && c.MaxContext > 0 && c.NumCtx > c.MaxContext {
		errs.Addf("num_ctx", "must not exceed max_context (%d), got %d", c.MaxContext, c.NumCtx)
	}
	if c.KeepAlive != "" && keepAliveValue(c.KeepAlive) == nil {
		errs.Addf("keep_alive", "must be an integer of seconds or a duration such as 5m, got %q", c.KeepAlive)
	}
	if len(c.RestartCommand) > 0 && strings.TrimSpace(c.RestartCommand[0]) == "" {
		errs.Addf("restart_command", "first element must name a program")
	}
	for model, p := range c.Prices {
		if p.InputPerMTok < 0 || p.OutputPerMTok < 0 {
			errs.Addf("prices."+model, "prices must not be negative")
		}
	}
	return errs.Err()
}

// Price returns the price of the configured model, if the table has it.
func (c Config) Price() (Price, bool) {
	p, ok := c.Prices[c.Model]
	return p, ok
}

// OllamaKeepAlive is the keep_alive value sent to Ollama (see keepAliveValue).
func (c Config) OllamaKeepAlive() any { return keepAliveValue(c.KeepAlive) }

// keepAliveValue is what goes into the JSON keep_alive field: a number for integer seconds,
// otherwise a duration string. It is nil for text Ollama would reject.
func keepAliveValue(s string) any {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	if len(s) > 1 {
		if _, err := strconv.ParseFloat(strings.TrimRight(s, "hms"), 64); err == nil && strings.ContainsAny(s[len(s)-1:], "hms") {
			return s
		}
	}
	return nil
}

// RequireLocal is the start-up guard for the chat and worker agents: they may only use a local
// provider (ollama or offline), because cloud models serve CODE routes only (SPEC §4). key is
// the config key of the provider, e.g. "agents.chat.provider".
func RequireLocal(key string, c Config) error {
	if IsLocal(c.Provider) {
		return nil
	}
	var errs config.Errors
	errs.Addf(key, "must be a local provider (ollama or offline): cloud models serve CODE routes only, got %q", c.Provider)
	return errs.Err()
}

// OllamaSettings is the suite's shared ollama section; agents on provider ollama take their
// unset fields from it.
type OllamaSettings struct {
	BaseURL        string   `yaml:"base_url"`
	NumCtx         int      `yaml:"num_ctx"`
	MaxContext     int      `yaml:"max_context"`
	TimeoutSec     int      `yaml:"timeout_sec"`
	KeepAlive      string   `yaml:"keep_alive"`
	RestartCommand []string `yaml:"restart_command"`
	MaxParallel    int      `yaml:"max_parallel"`
}

// DefaultOllamaSettings are the ollama section's defaults.
func DefaultOllamaSettings() OllamaSettings {
	return OllamaSettings{BaseURL: DefaultOllamaURL, NumCtx: DefaultNumCtx, MaxContext: DefaultNumCtx, TimeoutSec: 60, KeepAlive: "-1",
		MaxParallel: DefaultOllamaParallel}
}

// WithOllama fills c's unset Ollama fields from the shared section (only for provider ollama).
func (c Config) WithOllama(o OllamaSettings) Config {
	if strings.ToLower(c.Provider) != ProviderOllama {
		return c
	}
	if c.BaseURL == "" {
		c.BaseURL = o.BaseURL
	}
	if c.NumCtx == 0 {
		c.NumCtx = o.NumCtx
	}
	if c.MaxContext == 0 {
		c.MaxContext = o.MaxContext
	}
	if c.TimeoutSec == 0 {
		c.TimeoutSec = o.TimeoutSec
	}
	if c.KeepAlive == "" {
		c.KeepAlive = o.KeepAlive
	}
	if len(c.RestartCommand) == 0 {
		c.RestartCommand = o.RestartCommand
	}
	if c.MaxParallel == 0 {
		c.MaxParallel = o.MaxParallel
	}
	return c
}

func (c Config) String() string {
	return fmt.Sprintf("%s/%s", c.Provider, c.Model)
}

// Agent is one agents.<id> entry (chat, worker): an alias and the model settings.
type Agent struct {
	Alias  string `yaml:"alias"`
	Config `yaml:",inline"`
}

// DefaultChatAgent and DefaultWorkerAgent are the defaults of SPEC §1.
func DefaultChatAgent() Agent {
	return Agent{Alias: "Mio", Config: Config{Provider: ProviderOllama, Model: "chat-v1:latest"}}
}

// DefaultWorkerAgent is the worker (Shiro) default.
func DefaultWorkerAgent() Agent {
	return Agent{Alias: "Shiro", Config: Config{Provider: ProviderOllama, Model: "worker-v1:latest"}}
}

// LocalAgent resolves a chat or worker agent for start-up: it merges the ollama section, fills
// defaults, validates, and refuses cloud providers. key is the agent's config key, e.g.
// "agents.chat"; errors name keys below it.
func LocalAgent(key string, a Agent, o OllamaSettings) (Config, error) {
	c := a.Config.WithOllama(o).WithDefaults()
	var errs config.Errors
	errs.Add(config.Prefix(key, c.Validate()))
	errs.Add(RequireLocal(key+".provider", c))
	return c, errs.Err()
}
