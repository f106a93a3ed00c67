package inbox

import (
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
	if c := s.ConsumerConfig("gateway-line", nil, nil); c.Name != "gw-1" || c.Concurrency != 16 || c.MaxAge != 24*time.Hour || c.MaxAttempts != 0 {
		t.Fatalf("consumer config = %+v", c)
	}
	s.Consumer = ""
	if c := s.ConsumerConfig("gateway-line-pod-1", nil, nil); c.Name != "gateway-line-pod-1" {
		t.Fatalf("name = %q, want the replica id", c.Name)
	}
	// Without one, every consumer gets a name of its own (replica.NewID).
	a, b := s.ConsumerConfig("", nil, nil).Name, s.ConsumerConfig("", nil, nil).Name
	if a == "" || a == b {
		t.Fatalf("default names %q and %q", a, b)
	}
}
