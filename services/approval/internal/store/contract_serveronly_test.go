//go:build serveronly

package store_test

import "testing"

// sqliteStores: SQLite is not linked into this build, so onBothStores runs on Postgres alone.
func sqliteStores() map[string]func(*testing.T) backend {
	return map[string]func(*testing.T) backend{}
}
