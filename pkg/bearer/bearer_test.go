package bearer

import (
	"strings"
	"testing"
)

func TestParseAndAuthenticate(t *testing.T) {
	const a, b = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210-x"
	tokens, err := Parse(" ops:" + a + " ,, audit : " + b)
	if err != nil || tokens.Len() != 2 {
		t.Fatalf("parse: %v %d", err, tokens.Len())
	}
	for _, tc := range []struct {
		token, name string
		ok          bool
	}{{a, "ops", true}, {b, "audit", true}, {a + "x", "", false}, {"", "", false}} {
		if name, ok := tokens.Authenticate(tc.token); name != tc.name || ok != tc.ok {
			t.Errorf("Authenticate(%q) = %q %v", tc.token, name, ok)
		}
	}
	if !tokens.Has("ops") || tokens.Has("nobody") {
		t.Error("Has")
	}
	for _, bad := range []string{"ops", ":" + a, "ops:short"} {
		if _, err := Parse(bad); err == nil || strings.Contains(err.Error(), "short") {
			t.Errorf("Parse(%q) = %v (an error that never shows the token)", bad, err)
		}
	}
	var none *Tokens
	if _, ok := none.Authenticate(a); ok {
		t.Error("no tokens let someone in")
	}
	if empty, err := Parse(""); err != nil || empty.Len() != 0 {
		t.Errorf("empty list: %v", err)
	}
	if f := Fingerprint(a); !strings.HasPrefix(f, "sha256:") || strings.Contains(f, a[:8]) || f != Fingerprint(a) || f == Fingerprint(b) {
		t.Errorf("fingerprint %q", f)
	}
}
