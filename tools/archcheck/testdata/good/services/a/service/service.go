// Package service uses the llm core, which links no SDK.
package service

import (
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/a/internal/domain"
)

var _ llm.Tracker = nil

// Name is the service's name.
const Name = "a" + domain.Marker
