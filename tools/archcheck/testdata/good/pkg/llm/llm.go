// Package llm is a core that links no provider.
package llm

// Tracker is implemented by heartbeat without importing this package.
type Tracker interface{ Track() }
