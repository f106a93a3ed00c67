//go:build serveronly

package config

import (
	"errors"
	"strings"
	"testing"
)

// A build with -tags serveronly refuses every SQLite choice under the key that made it, naming
// the tag, and accepts the server engines.
func TestServerOnlyRefusesSQLite(t *testing.T) {
	if SQLiteLinked {
		t.Fatal("SQLiteLinked is true in a build with -tags serveronly")
	}
	for _, c := range []struct {
		key, engine string
		refused     bool
	}{
		{"state.engine", StateSQLite, true},
		{"approval.store", "sqlite", true},
		{"state.engine", StateRedis, false},
		{"approval.store", "postgres", false},
	} {
		err := CheckLinked(c.key, c.engine)
		if !c.refused {
			if err != nil {
				t.Errorf("%s %s: %v", c.key, c.engine, err)
			}
			continue
		}
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Key != c.key {
			t.Fatalf("%s %s: got %v, want a KeyError on %s", c.key, c.engine, err, c.key)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, c.key+": sqlite is not linked") || !strings.Contains(msg, "-tags "+ServerOnlyTag) {
			t.Errorf("%s %s: %q names neither the key first nor the tag", c.key, c.engine, msg)
		}
	}
	// The openers' own error (reached only past Validate) names the tag too.
	if err := NotLinked(StateSQLite); !strings.Contains(err.Error(), "-tags "+ServerOnlyTag) {
		t.Errorf("NotLinked(sqlite) = %v", err)
	}
	// The embedded build's error keeps naming its own tag.
	if err := NotLinked("redis"); !strings.Contains(err.Error(), "-tags "+SQLiteOnlyTag) {
		t.Errorf("NotLinked(redis) = %v", err)
	}
}
