// Package replica names one running process among the replicas of a service: the consumer
// name in an inbox group, the executor that holds a claim, the approval instance that holds the
// sweeper lease, the sender of a heartbeat.
package replica

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
)

// NewID returns an id unique to this process start: the host name (fallback when there is
// none), the process id and a random suffix. Two replicas never share one — not on one host,
// not in two containers that both run as pid 1 under the same host name.
func NewID(fallback string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = fallback
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Or is configured when set, otherwise a NewID.
func Or(configured, fallback string) string {
	if configured != "" {
		return configured
	}
	return NewID(fallback)
}

// MaxLen bounds a configured id (it is part of keys, log lines and audit events).
const MaxLen = 64

var valid = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]*$`)

// Valid reports whether a configured id is usable: 1 to 64 letters, digits, '.', '_', '@' or
// '-', starting with a letter or digit.
func Valid(id string) bool { return len(id) <= MaxLen && valid.MatchString(id) }
