// Package service links the SDK through the llm package, which only cloud composition roots may.
package service

import "github.com/picoclaw-suite/picoclaw/pkg/llm"

// Name is the service's name.
const Name = "a/" + llm.Provider
