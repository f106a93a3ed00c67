package service

import (
	"fmt"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/ollama"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/providers"
)

// Agents is the part of the agents: section chat-mio reads.
type Agents struct {
	Chat llm.Config `yaml:"chat"`
}

func (c *Config) chatModelConfig() llm.Config {
	return c.Agents.Chat.WithOllama(c.Ollama)
}

// validateModel checks agents.chat: it must be a local provider (cloud models serve CODE
// routes only) with a valid configuration. An injected ChatModel skips it.
func (c *Config) validateModel() error {
	if c.ChatModel != nil {
		return nil
	}
	var errs config.Errors
	errs.Add(llm.RequireLocal("agents.chat.provider", c.Agents.Chat))
	errs.Add(config.Prefix("agents.chat", c.chatModelConfig().WithDefaults().Validate()))
	return errs.Err()
}

// restarter is the Restarter chat-mio's local models share: the embedded suite's, or one of
// the ollama section's restart_command (nil when it is empty), so that the chat and the
// vision model on one server restart it once, not once each.
func (c *Config) restarter(log *slog.Logger) *ollama.Restarter {
	if c.Restarter != nil {
		return c.Restarter
	}
	o := c.chatModelConfig().WithDefaults()
	return ollama.NewRestarter(ollama.RestarterConfig{Command: o.RestartCommand, BaseURL: o.BaseURL, Logger: log})
}

// buildModel builds Mio's chat model. An Ollama model is guarded: a call that finds the model
// missing or the server unreachable restarts Ollama once (restart_command) and tries again.
func buildModel(cfg Config, r *ollama.Restarter, log *slog.Logger, observer llm.Observer, tp trace.TracerProvider) (llm.Client, error) {
	m, err := ollama.NewLocal(cfg.chatModelConfig(), llm.WithLogger(log), llm.WithObserver(observer), llm.WithTracerProvider(tp))
	if err != nil {
		return nil, fmt.Errorf("agents.chat: %w", err)
	}
	return ollama.Guarded(m, r, log), nil
}

// Models is the models: section: models for what the chat model cannot do.
type Models struct {
	// Vision answers images (LINE images, Slack file shares). Empty model: images are answered
	// with how to set one up. The provider defaults to ollama; a cloud provider (openai,
	// anthropic) is used only for sessions that are not local_only.
	Vision llm.Config `yaml:"vision"`
}

// visionConfigured reports whether models.vision names a model (a provider alone does not).
func (c *Config) visionConfigured() bool {
	return strings.TrimSpace(c.Models.Vision.Model) != ""
}

func (c *Config) visionModelConfig() llm.Config {
	v := c.Models.Vision
	if v.Provider == "" {
		v.Provider = llm.ProviderOllama
	}
	return v.WithOllama(c.Ollama)
}

// validateVision checks models.vision: a provider whose wire carries images (ollama, openai,
// anthropic; not deepseek, whose API takes no images, nor offline, which is no model).
func (c *Config) validateVision() error {
	if !c.visionConfigured() {
		return nil
	}
	var errs config.Errors
	v := c.visionModelConfig()
	switch v.Provider {
	case llm.ProviderOllama, llm.ProviderOpenAI, llm.ProviderAnthropic:
	default:
		errs.Addf("models.vision.provider", "must be ollama, openai or anthropic (a model that reads images), got %q", v.Provider)
		return errs.Err()
	}
	errs.Add(config.Prefix("models.vision", v.WithDefaults().Validate()))
	return errs.Err()
}

// buildVision builds the vision model (nil when none is configured). An Ollama model is
// guarded as the chat model is: a call that finds it missing or the server unreachable
// restarts Ollama once and is tried once more. Only the call is repeated: the image's audit
// record is written once, before the first attempt (app.seeImage).
func buildVision(cfg Config, r *ollama.Restarter, log *slog.Logger, observer llm.Observer, tp trace.TracerProvider) (llm.Client, error) {
	if !cfg.visionConfigured() {
		return nil, nil
	}
	m, err := providers.New(cfg.visionModelConfig(), llm.WithLogger(log), llm.WithObserver(observer), llm.WithTracerProvider(tp))
	if err != nil {
		return nil, fmt.Errorf("models.vision: %w", err)
	}
	return ollama.Guarded(m, r, log), nil
}
