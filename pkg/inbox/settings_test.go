package inbox

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
)

func TestSettingsValidateNamesKeys(t *testing.T) {
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	bad := Settings{DedupeTTL: time.Minute, MaxAttempts: -1}
	err := config.Prefix("line.inbox", bad.Validate())
	for _, key := range []string{"concurrency", "claim_idle", "max_attempts", "max_age", "block", "dedupe_ttl"} {
		if err == nil || !strings.Contains(err.Error(), "line.inbox."+key+":") {
			t.Errorf("error does not name line.inbox.%s: %v", key, err)
		}
	}
}

func TestConsumerConfigName(t *testing.T) {
	s := DefaultSettings()
	s.Consumer = "gw-1"
	if c := s.ConsumerConfig("gateway-line", nil, nil); c.Name != "gw-1" || c.Concurrency != 8 || c.MaxAge != 24*time.Hour || c.MaxAttempts != 0 {
		t.Fatalf("consumer config = %+v", c)
	}
	s.Consumer = ""
	a, b := s.ConsumerConfig("gateway-line", nil, nil).Name, s.ConsumerConfig("gateway-line", nil, nil).Name
	host, _ := os.Hostname()
	if host == "" {
		host = "gateway-line"
	}
	pid := fmt.Sprintf("-%d-", os.Getpid())
	for _, n := range []string{a, b} {
		if !strings.HasPrefix(n, host+pid) || len(n) != len(host+pid)+8 {
			t.Fatalf("default name %q: want <host>-<pid>-<8 hex>", n)
		}
	}
	// Two replicas on one host (or two containers with one host name and pid) never share it.
	if a == b {
		t.Fatalf("two consumers got the same default name %q", a)
	}
}
