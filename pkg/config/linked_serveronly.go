//go:build serveronly

package config

// SQLiteLinked reports whether this binary holds the SQLite engine: false only in a build with
// ServerOnlyTag.
const SQLiteLinked = false
