// Package e2e holds the end-to-end tests: they build the real service binaries and run them
// as processes.
package e2e
