package config

import (
	"fmt"
	"strings"
)

// MinSecretBytes is the shortest secret a service accepts.
const MinSecretBytes = 32

// placeholders are values from example files and documentation that must never run.
var placeholders = []string{"change-me", "changeme", "replace-with", "replace-me", "replace_me", "your-", "example",
	"placeholder", "secret-here", "xxxxxxxx", "dummy", "password"}

// CheckSecret refuses a placeholder or a value shorter than minLen bytes; the error names the
// environment variable the value came from.
func CheckSecret(env, value string, minLen int) error {
	v := strings.TrimSpace(value)
	low := strings.ToLower(v)
	for _, p := range placeholders {
		if strings.Contains(low, p) {
			return fmt.Errorf("%s holds a placeholder value (%q): set a real secret", env, p)
		}
	}
	if len(v) < minLen {
		return fmt.Errorf("%s has %d bytes: use at least %d random bytes", env, len(v), minLen)
	}
	if distinct(v) < 8 {
		return fmt.Errorf("%s is not random enough (%d distinct characters)", env, distinct(v))
	}
	return nil
}

func distinct(s string) int {
	seen := map[rune]bool{}
	for _, r := range s {
		seen[r] = true
	}
	return len(seen)
}
