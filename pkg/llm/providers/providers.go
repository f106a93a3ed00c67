// Package providers picks the model client for a config: Ollama, OpenAI-compatible (OpenAI,
// DeepSeek), Anthropic or the offline provider. It links every provider SDK, so only the
// composition roots that may call a cloud model import it (router-shiro, coder-order, chat-mio
// for its vision model, and the picoclaw CLI's embedded suite); the core pkg/llm links none.
package providers

import (
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/anthropic"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/ollama"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/openai"
)

// New builds the client for cfg.Provider after filling defaults and validating. Cloud
// providers need their key in the environment variable named by api_key_env.
func New(cfg llm.Config, opts ...llm.Option) (llm.Client, error) {
	switch strings.ToLower(strings.TrimSpace(cfg.Provider)) {
	case llm.ProviderOpenAI, llm.ProviderDeepSeek:
		return openai.New(cfg, opts...)
	case llm.ProviderAnthropic:
		return anthropic.New(cfg, opts...)
	}
	// Ollama, offline, and anything else (which validation rejects with the offending key).
	return ollama.NewLocal(cfg, opts...)
}
