package service

import (
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/ollama"
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

// buildModel builds Mio's chat model. An Ollama model is guarded: a call that finds the model
// missing or the server unreachable restarts Ollama once (restart_command) and tries again.
func buildModel(cfg Config, log *slog.Logger, observer llm.Observer, tp trace.TracerProvider) (llm.Client, error) {
	m, err := ollama.NewLocal(cfg.chatModelConfig(), llm.WithLogger(log), llm.WithObserver(observer), llm.WithTracerProvider(tp))
	if err != nil {
		return nil, fmt.Errorf("agents.chat: %w", err)
	}
	return ollama.Guarded(m, cfg.Restarter, log), nil
}
