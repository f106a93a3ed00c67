// Package openai is the provider package: it speaks the wire itself, without the SDK.
package openai

import "github.com/picoclaw-suite/picoclaw/pkg/llm"

// Provider names the provider.
const Provider = "openai"

var _ llm.Tracker = nil
