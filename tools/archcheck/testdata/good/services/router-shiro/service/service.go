// Package service is a composition root that may link a provider SDK.
package service

import "github.com/picoclaw-suite/picoclaw/pkg/llm/openai"

// Provider is the worker's provider.
const Provider = openai.Provider
