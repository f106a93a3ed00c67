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
