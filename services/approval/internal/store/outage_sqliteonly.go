//go:build sqliteonly

package store

// postgresUnavailable: the Postgres driver is not linked into this build.
func postgresUnavailable(error) bool { return false }
