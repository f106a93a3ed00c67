// Package heartbeat wrongly imports the llm package.
package heartbeat

import "github.com/picoclaw-suite/picoclaw/pkg/llm"

// Provider is the model's provider.
const Provider = llm.Provider
