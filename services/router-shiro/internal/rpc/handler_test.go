package rpc

import (
	"strings"
	"testing"
)

func TestValidChannel(t *testing.T) {
	for in, want := range map[string]bool{"": true, "line": true, "slack": true, "cli": true, "my-bot_2": true, "LINE": false, "a b": false, strings.Repeat("x", 33): false} {
		if got := validChannel(in); got != want {
			t.Errorf("%q: %v", in, got)
		}
	}
}
