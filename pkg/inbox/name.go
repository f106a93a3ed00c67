package inbox

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
)

// DefaultConsumerName names this process in a consumer group: the host name (fallback when it
// has none), the process id and a random suffix, so two replicas never share a name — not on
// one host, not in two containers that both run as pid 1 with the same host name. Two
// consumers with one name would take each other's pending entries for their own.
func DefaultConsumerName(fallback string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = fallback
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}
