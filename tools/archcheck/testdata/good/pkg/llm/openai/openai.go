// Package openai is the provider package, the one place that imports the SDK.
package openai

import (
	"github.com/openai/openai-go/v3"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// Provider names the SDK.
const Provider = openai.Name

var _ llm.Tracker = nil
