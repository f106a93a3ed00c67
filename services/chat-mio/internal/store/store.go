package store

import (
	"fmt"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// memoryTTL is how long the short memory of a chat is kept.
const memoryTTL = 48 * time.Hour

// orDefaultTTL is the session lifetime, 30 days unless configured.
func orDefaultTTL(sessionTTL time.Duration) time.Duration {
	if sessionTTL <= 0 {
		return 30 * 24 * time.Hour
	}
	return sessionTTL
}

func unavailable(op string, err error) error {
	return fmt.Errorf("session store %s: %w: %w", op, domain.ErrUnavailable, err)
}
