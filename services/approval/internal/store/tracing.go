//go:build !sqliteonly

package store

const instrumentation = "github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
