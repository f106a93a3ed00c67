package svcauth

import (
	"fmt"
	"testing"
	"time"
)

// TestVouchCacheIsBounded: principal assertions, one per message, never fill the cache beyond
// its bound; the newest is still found and an expired one is not.
func TestVouchCacheIsBounded(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	v := verifyCache{max: vouchCacheMax}
	for i := range 3 * vouchCacheMax {
		v.store(fmt.Sprintf("assertion-%d", i), verifiedToken{Subject: fmt.Sprint(i), Expires: now.Add(time.Minute)}, now)
		if len(v.entries) > vouchCacheMax {
			t.Fatalf("%d entries after %d stores, bound %d", len(v.entries), i+1, vouchCacheMax)
		}
	}
	last := fmt.Sprintf("assertion-%d", 3*vouchCacheMax-1)
	if e, ok := v.lookup(last, now); !ok || e.Subject != fmt.Sprint(3*vouchCacheMax-1) {
		t.Fatalf("newest assertion not found: %+v %v", e, ok)
	}
	if _, ok := v.lookup(last, now.Add(time.Hour)); ok {
		t.Fatal("an expired assertion was found")
	}
	if _, ok := v.lookup("never-stored", now); ok {
		t.Fatal("an unknown assertion was found")
	}
}

// TestVouchIsReusedForAWindow: a user's messages within vouchReuse carry the same assertion, which
// still has at least PrincipalTTL-vouchReuse to live; later, or for another user, a new one.
func TestVouchIsReusedForAWindow(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	signed := 0
	var v vouchCache
	vouch := func(user string, at time.Time) string {
		t.Helper()
		raw, err := v.get("line\x00"+user, at, func() (string, error) {
			signed++
			return fmt.Sprintf("%s@%d", user, signed), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	first := vouch("U1", now)
	if again := vouch("U1", now.Add(vouchReuse-time.Second)); again != first {
		t.Fatalf("within a minute: %q, want %q", again, first)
	}
	if other := vouch("U2", now); other == first {
		t.Fatal("another user got U1's assertion")
	}
	if later := vouch("U1", now.Add(vouchReuse)); later == first {
		t.Fatal("an assertion was reused after vouchReuse")
	}
	if back := vouch("U1", now.Add(-time.Hour)); back == first {
		t.Fatal("a clock that went back reused an assertion signed in its future")
	}
	if signed != 4 {
		t.Fatalf("%d signatures, want 4", signed)
	}
	for i := range 3 * vouchMintMax {
		vouch(fmt.Sprint("user-", i), now)
		if len(v.entries) > vouchMintMax {
			t.Fatalf("%d users kept, bound %d", len(v.entries), vouchMintMax)
		}
	}
	if PrincipalTTL-vouchReuse < 14*time.Minute {
		t.Fatalf("a reused assertion may have only %s left", PrincipalTTL-vouchReuse)
	}
}
