package llm

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"
)

// New builds the client for cfg.Provider after filling defaults and validating. Cloud
// providers need their key in the environment variable named by api_key_env.
func New(cfg Config, opts ...Option) (Client, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("llm config: %w", err)
	}
	o := options{lookupEnv: os.LookupEnv, sleep: sleepCtx, maxWait: 60 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	if o.httpClient == nil {
		o.httpClient = &http.Client{}
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	switch cfg.Provider {
	case ProviderOffline:
		return NewOffline(), nil
	case ProviderOllama:
		return newOllama(cfg, o), nil
	}
	key, _ := o.lookupEnv(cfg.APIKeyEnv)
	key = strings.TrimSpace(key)
	if key == "" {
		return nil, fmt.Errorf("%s: %w: environment variable %s is empty", cfg.Provider, ErrNoAPIKey, cfg.APIKeyEnv)
	}
	switch cfg.Provider {
	case ProviderOpenAI, ProviderDeepSeek:
		return newOpenAI(cfg, key, o), nil
	case ProviderAnthropic:
		return newAnthropic(cfg, key, o), nil
	}
	return nil, fmt.Errorf("llm: unknown provider %q", cfg.Provider)
}

// NewOllama builds an Ollama client directly, for callers that need Health, EnsureHealthy or
// Restart (a Client from New can also be type-asserted to *Ollama).
func NewOllama(cfg Config, opts ...Option) (*Ollama, error) {
	cfg.Provider = ProviderOllama
	c, err := New(cfg, opts...)
	if err != nil {
		return nil, err
	}
	return c.(*Ollama), nil
}
