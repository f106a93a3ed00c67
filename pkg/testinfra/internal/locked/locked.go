// Package locked reads the state the fake servers share with their handlers.
package locked

import "sync"

// Copy returns a copy of the slice *s, read under mu, so that the caller may keep it while the
// server goes on appending.
func Copy[T any](mu *sync.Mutex, s *[]T) []T {
	mu.Lock()
	defer mu.Unlock()
	return append([]T(nil), *s...)
}
