package channel

import (
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
)

func TestAllowlist(t *testing.T) {
	a := NewAllowlist([]string{" Uallowed ", ""})
	for _, tc := range []struct {
		user string
		want bool
	}{{"Uallowed", true}, {"Uother", false}, {"", false}} {
		if got := a.Allowed(tc.user); got != tc.want {
			t.Errorf("Allowed(%q) = %v", tc.user, got)
		}
	}
	if NewAllowlist(nil).Allowed("Uanyone") {
		t.Error("empty allowlist lets someone in")
	}
}

func TestContentKey(t *testing.T) {
	a, b := ContentKey("line:U1", "job_1", "x"), ContentKey("line:U1", "job_1", "x")
	if a != b || !strings.HasPrefix(a, "content:") {
		t.Fatalf("content keys %q %q", a, b)
	}
	// The separator keeps ("ab","c") and ("a","bc") apart.
	if ContentKey("ab", "c") == ContentKey("a", "bc") || a == ContentKey("line:U1", "job_1", "y") {
		t.Fatal("different content gave the same key")
	}
}

func TestTexts(t *testing.T) {
	ja, en := chatlink.TextsFor("ja"), chatlink.TextsFor("en")
	if ja.Refusal == en.Refusal || ja.Label("approve") != "承認" || en.Label("deny") != "Deny" || en.Label("pick") != "Pick" {
		t.Fatalf("texts %+v / %+v", ja, en)
	}
}
