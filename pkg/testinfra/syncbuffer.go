package testinfra

import (
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// SyncBuffer collects a process's or a logger's output from several goroutines. The suite
// logs JSON lines (log/slog): Records, Events and Count read them back.
type SyncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Records are the JSON log records written so far (other lines are passed over).
func (s *SyncBuffer) Records() []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(s.String(), "\n") {
		var rec map[string]any
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}

// Events are the records whose msg is msg (every record when msg is "").
func (s *SyncBuffer) Events(msg string) []map[string]any {
	var out []map[string]any
	for _, rec := range s.Records() {
		if msg == "" || rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// Count is the number of records whose msg is msg.
func (s *SyncBuffer) Count(msg string) int { return len(s.Events(msg)) }

// Eventually waits until cond holds, checking every 20 ms, and fails the test naming what
// it waited for when within passes first.
func Eventually(t interface {
	Helper()
	Fatalf(string, ...any)
}, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
