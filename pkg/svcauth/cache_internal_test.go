package svcauth

import (
	"crypto/sha256"
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

// checkKept fails unless every entry is listed once under its holder and every listed key is
// an entry of that holder.
func checkKept(t *testing.T, v *verifyCache) {
	t.Helper()
	listed := map[[sha256.Size]byte]bool{}
	for h, keys := range v.kept {
		if len(keys) == 0 || len(keys) > holderKept {
			t.Fatalf("holder %q lists %d keys", h, len(keys))
		}
		for _, k := range keys {
			e, ok := v.entries[k]
			if !ok || e.holder != h || e.verifiedToken.holder() != h {
				t.Fatalf("holder %q lists a key whose entry is %+v (present %v)", h, e, ok)
			}
			if listed[k] {
				t.Fatalf("a key is listed twice (holder %q)", h)
			}
			listed[k] = true
		}
	}
	for k := range v.entries {
		if !listed[k] {
			t.Fatalf("an entry of %q is in no holder's list", v.entries[k].holder)
		}
	}
}

// TestVerifyCacheKeepsAFewTokensPerHolder: the tokens of up to holderKept replicas of one
// holder all stay remembered however they alternate; a holder's renewals beyond holderKept
// push out its least recently used, not another holder's, and not one still in use.
func TestVerifyCacheKeepsAFewTokensPerHolder(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var v verifyCache
	tok := func(sub string) verifiedToken {
		return verifiedToken{Issuer: "gateway-line", Channel: "line", Subject: sub, Expires: now.Add(time.Hour)}
	}
	v.store("other", tok("U2"), now)
	misses := 0
	for round := range 10 {
		for r := range holderKept {
			raw := fmt.Sprint("replica-", r)
			if _, ok := v.lookup(raw, now); !ok {
				misses++
				v.store(raw, tok("U1"), now)
			}
			checkKept(t, &v)
		}
		if round == 0 && misses != holderKept {
			t.Fatalf("%d misses in the first round, want %d", misses, holderKept)
		}
	}
	if misses != holderKept {
		t.Fatalf("%d replicas alternating: %d signature checks over 10 rounds, want %d", holderKept, misses, holderKept)
	}
	// Renewals: each pushes out the least recently used; replica-0, used throughout, stays.
	if _, ok := v.lookup("replica-0", now); !ok {
		t.Fatal("replica-0 forgotten")
	}
	for i := range 2 * holderKept {
		v.store(fmt.Sprint("renewal-", i), tok("U1"), now)
		if _, ok := v.lookup("replica-0", now); !ok {
			t.Fatalf("a token in use was pushed out by renewal %d", i)
		}
		checkKept(t, &v)
	}
	for i := range 2 * holderKept {
		_, ok := v.lookup(fmt.Sprint("renewal-", i), now)
		if want := i > holderKept; ok != want {
			t.Fatalf("renewal %d remembered %v, want %v", i, ok, want)
		}
	}
	if _, ok := v.lookup("other", now); !ok {
		t.Fatal("U1's renewals pushed out U2's token")
	}
	if len(v.entries) != holderKept+1 {
		t.Fatalf("%d entries, want %d", len(v.entries), holderKept+1)
	}
	checkKept(t, &v)
}

// TestFullCachesAreThinnedNotEmptied: one entry past the bound removes the expired entries and
// then a quarter of the rest, not everything a bound's worth of active users left.
func TestFullCachesAreThinnedNotEmptied(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	v := verifyCache{max: 400}
	for i := range 400 {
		exp := now.Add(time.Hour)
		if i < 40 {
			exp = now.Add(-time.Hour)
		}
		// Holders with several tokens each.
		v.store(fmt.Sprint("a-", i), verifiedToken{Subject: fmt.Sprint(i % 60), Expires: exp}, now)
	}
	checkKept(t, &v)
	v.store("newest", verifiedToken{Subject: "newest", Expires: now.Add(time.Hour)}, now)
	if n := len(v.entries); n != 300 {
		t.Fatalf("%d entries after thinning a full cache of 400, want 300", n)
	}
	for i := range 40 {
		if _, ok := v.entries[sha256.Sum256([]byte(fmt.Sprint("a-", i)))]; ok {
			t.Fatalf("expired entry %d kept while live ones went", i)
		}
	}
	if _, ok := v.lookup("newest", now); !ok {
		t.Fatal("the newest entry is missing")
	}
	checkKept(t, &v)

	var m vouchCache
	for i := range vouchMintMax + 1 {
		if _, err := m.get(fmt.Sprint("line\x00U", i), now, func() (string, error) { return fmt.Sprint("a", i), nil }); err != nil {
			t.Fatal(err)
		}
	}
	if n, want := len(m.entries), vouchMintMax-vouchMintMax/4; n != want {
		t.Fatalf("mint cache holds %d after one past its bound, want %d", n, want)
	}
}
