package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

// Whoever else can write to Redis cannot make, widen or revive a grant: only a value sealed
// with approval's key reads as a grant.
func TestForgedGrantsInRedisAreIgnored(t *testing.T) {
	ctx := context.Background()
	rdb := testinfra.Redis(t)
	key := rdb.Prefix + "approval:auto_approve"
	grants := store.NewRedisGrants(rdb.Client, rdb.Prefix, store.GrantSealKey([]byte("audit-key-0123456789abcdef0123456789")), nil)
	g := domain.Grant{ID: "g1", PathPrefixes: []string{"docs/"}, ExpiresAt: time.Now().Add(time.Hour)}
	if err := grants.Set(ctx, g, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, err := grants.Get(ctx); err != nil || got == nil || got.ID != "g1" {
		t.Fatalf("sealed grant: %+v, %v", got, err)
	}
	for name, value := range map[string]string{
		"plain grant JSON":   `{"id":"g2","path_prefixes":["."],"allowed_operations":["shell"],"expires_at":"2099-01-01T00:00:00Z"}`,
		"sealed without MAC": `{"grant":{"id":"g2","path_prefixes":["."]},"mac":""}`,
		"widened, old MAC":   widen(t, rdb.Client.Get(ctx, key).Val()),
	} {
		if err := rdb.Client.Set(ctx, key, value, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		if got, err := grants.Get(ctx); err != nil || got != nil {
			t.Fatalf("%s: read as %+v, %v", name, got, err)
		}
	}
	// A store with another key (another suite, another service) cannot read ours either.
	if err := grants.Set(ctx, g, time.Hour); err != nil {
		t.Fatal(err)
	}
	other := store.NewRedisGrants(rdb.Client, rdb.Prefix, store.GrantSealKey([]byte("another-key-0123456789abcdef0123456")), nil)
	if got, _ := other.Get(ctx); got != nil {
		t.Fatal("a grant sealed with another key was accepted")
	}
}

// widen replaces the sealed grant's path scope while keeping its MAC.
func widen(t *testing.T, sealed string) string {
	t.Helper()
	if sealed == "" {
		t.Fatal("no sealed grant to widen")
	}
	return replaceOnce(sealed, `"docs/"`, `"."`)
}

func replaceOnce(s, old, repl string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + repl + s[i+len(old):]
		}
	}
	return s
}
