// Package llm is a core that wrongly links a provider SDK.
package llm

import "github.com/openai/openai-go/v3"

// Provider names the SDK.
const Provider = openai.Name
