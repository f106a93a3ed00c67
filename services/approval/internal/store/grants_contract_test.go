package store_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

var (
	grantKey = store.GrantSealKey([]byte("audit-key-0123456789abcdef0123456789"))
	otherKey = store.GrantSealKey([]byte("another-key-0123456789abcdef0123456"))
)

// grantEngine is one grant store implementation under the contract, on state of its own.
type grantEngine struct {
	// open returns a store on the engine's state sealed with key, logging to log (nil: none).
	// A second call first drops the previous store's connection (a restart).
	open func(t *testing.T, key []byte, log *slog.Logger) app.GrantStore
	// raw is the stored value ("" when there is none); write replaces it as anyone else who
	// can write to the engine could.
	raw   func(t *testing.T) string
	write func(t *testing.T, value string)
	// ttl is the remaining lifetime of the stored value.
	ttl func(t *testing.T) time.Duration
	// down is a store whose engine cannot be reached.
	down func(t *testing.T) app.GrantStore
}

func grantContract(t *testing.T, newEngine func(t *testing.T) grantEngine) {
	cases := []struct {
		name string
		run  func(t *testing.T, e grantEngine)
	}{
		{"SetGetDelete", grantSetGetDelete},
		{"SurvivesReopen", grantSurvivesReopen},
		{"Expires", grantExpires},
		{"ForgedGrantsAreIgnored", forgedGrantsAreIgnored},
		{"NoSealKey", grantWithoutSealKey},
		{"EngineDownIsAnError", grantEngineDown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newEngine(t)) })
	}
}

func testGrant(id string) domain.Grant {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return domain.Grant{ID: id, PathPrefixes: []string{"docs/"}, TaskTypes: []string{"docs"}, Routes: []string{"CODE2"},
		CreatedBy: domain.Actor{ID: "U1", Channel: "slack"}, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
}

func getGrant(t *testing.T, g app.GrantStore) *domain.Grant {
	t.Helper()
	got, err := g.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func setGrant(t *testing.T, s app.GrantStore, g domain.Grant, ttl time.Duration) {
	t.Helper()
	if err := s.Set(context.Background(), g, ttl); err != nil {
		t.Fatal(err)
	}
}

func deleteGrant(t *testing.T, s app.GrantStore) *domain.Grant {
	t.Helper()
	got, err := s.Delete(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func grantSetGetDelete(t *testing.T, e grantEngine) {
	s := e.open(t, grantKey, nil)
	if g := getGrant(t, s); g != nil {
		t.Fatalf("empty store has %+v", g)
	}
	if g := deleteGrant(t, s); g != nil {
		t.Fatalf("deleting nothing returned %+v", g)
	}
	want := testGrant("g1")
	setGrant(t, s, want, time.Hour)
	got := getGrant(t, s)
	if got == nil || got.ID != "g1" || !got.ExpiresAt.Equal(want.ExpiresAt) || got.CreatedBy != want.CreatedBy ||
		strings.Join(got.PathPrefixes, ",") != "docs/" || strings.Join(got.Routes, ",") != "CODE2" {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if ttl := e.ttl(t); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Fatalf("stored for %s, want the grant's hour", ttl)
	}
	// Set replaces the grant and its lifetime.
	setGrant(t, s, testGrant("g2"), time.Minute)
	if got := getGrant(t, s); got == nil || got.ID != "g2" {
		t.Fatalf("replaced grant = %+v", got)
	}
	if ttl := e.ttl(t); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("replaced grant stored for %s", ttl)
	}
	if got := deleteGrant(t, s); got == nil || got.ID != "g2" {
		t.Fatalf("Delete returned %+v, want g2", got)
	}
	if got := getGrant(t, s); got != nil {
		t.Fatalf("deleted grant reads as %+v", got)
	}
	if raw := e.raw(t); raw != "" {
		t.Fatalf("deleted grant still stored: %s", raw)
	}
}

func grantSurvivesReopen(t *testing.T, e grantEngine) {
	setGrant(t, e.open(t, grantKey, nil), testGrant("g1"), time.Hour)
	s := e.open(t, grantKey, nil)
	if got := getGrant(t, s); got == nil || got.ID != "g1" {
		t.Fatalf("after reopening: %+v, want g1", got)
	}
	if got := deleteGrant(t, s); got == nil {
		t.Fatal("nothing to delete after reopening")
	}
	if got := getGrant(t, e.open(t, grantKey, nil)); got != nil {
		t.Fatalf("deleted, reopened: %+v", got)
	}
}

func grantExpires(t *testing.T, e grantEngine) {
	s := e.open(t, grantKey, nil)
	const ttl = 30 * time.Millisecond
	setGrant(t, s, testGrant("g1"), ttl)
	time.Sleep(2 * ttl)
	if got := getGrant(t, s); got != nil {
		t.Fatalf("expired grant reads as %+v", got)
	}
	if got := deleteGrant(t, s); got != nil {
		t.Fatalf("Delete returned the expired grant %+v", got)
	}
}

// Whoever else can write to the engine cannot make, widen or revive a grant: only a value
// sealed with approval's key for this place reads as a grant.
func forgedGrantsAreIgnored(t *testing.T, e grantEngine) {
	var logs bytes.Buffer
	s := e.open(t, grantKey, slog.New(slog.NewJSONHandler(&logs, nil)))
	setGrant(t, s, testGrant("g1"), time.Hour)
	if got := getGrant(t, s); got == nil || got.ID != "g1" {
		t.Fatalf("sealed grant: %+v", got)
	}
	sealed := e.raw(t)
	for name, value := range map[string]string{
		"plain grant JSON":   `{"id":"g2","path_prefixes":["."],"allowed_operations":["shell"],"expires_at":"2099-01-01T00:00:00Z"}`,
		"sealed without MAC": `{"grant":{"id":"g2","path_prefixes":["."]},"mac":""}`,
		"widened, old MAC":   strings.Replace(sealed, `"docs/"`, `"."`, 1),
		"not JSON":           "\x00garbage",
	} {
		if name == "widened, old MAC" && value == sealed {
			t.Fatalf("no path scope to widen in %s", sealed)
		}
		e.write(t, value)
		if got := getGrant(t, s); got != nil {
			t.Fatalf("%s: read as %+v", name, got)
		}
		if got := deleteGrant(t, s); got != nil {
			t.Fatalf("%s: Delete returned %+v", name, got)
		}
	}
	for _, msg := range []string{`"msg":"approval.grant_forged"`, `"msg":"approval.grant_unsealed"`} {
		if !strings.Contains(logs.String(), msg) {
			t.Errorf("no %s in the log:\n%s", msg, logs.String())
		}
	}
	// A store with another key (another suite) cannot read ours either.
	setGrant(t, s, testGrant("g1"), time.Hour)
	if got := getGrant(t, e.open(t, otherKey, nil)); got != nil {
		t.Fatal("a grant sealed with another key was accepted")
	}
}

func grantWithoutSealKey(t *testing.T, e grantEngine) {
	setGrant(t, e.open(t, grantKey, nil), testGrant("g1"), time.Hour)
	s := e.open(t, nil, nil)
	if err := s.Set(context.Background(), testGrant("g2"), time.Hour); err == nil {
		t.Fatal("a grant was stored without a seal key")
	}
	if got := getGrant(t, s); got != nil {
		t.Fatalf("read without a seal key: %+v", got)
	}
}

func grantEngineDown(t *testing.T, e grantEngine) {
	s, ctx := e.down(t), context.Background()
	if _, err := s.Get(ctx); err == nil {
		t.Error("Get with the engine down succeeded")
	}
	if err := s.Set(ctx, testGrant("g1"), time.Hour); err == nil {
		t.Error("Set with the engine down succeeded")
	}
	if _, err := s.Delete(ctx); err == nil {
		t.Error("Delete with the engine down succeeded")
	}
}

func redisGrantEngine(t *testing.T) grantEngine {
	r := testinfra.Redis(t)
	key := r.Prefix + "approval:auto_approve"
	var conn *store.RedisClient
	t.Cleanup(func() {
		if conn != nil {
			_ = conn.Close()
		}
	})
	ctx := context.Background()
	return grantEngine{
		open: func(t *testing.T, sealKey []byte, log *slog.Logger) app.GrantStore {
			if conn != nil {
				_ = conn.Close()
			}
			conn = store.NewRedisClient(store.RedisOptions{Addr: r.Addr})
			return store.NewRedisGrants(conn, r.Prefix, sealKey, log)
		},
		raw: func(t *testing.T) string { return r.Client.Get(ctx, key).Val() },
		write: func(t *testing.T, value string) {
			if err := r.Client.Set(ctx, key, value, time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
		},
		ttl: func(t *testing.T) time.Duration { return r.Client.PTTL(ctx, key).Val() },
		down: func(t *testing.T) app.GrantStore {
			c := store.NewRedisClient(store.RedisOptions{Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
			t.Cleanup(func() { _ = c.Close() })
			return store.NewRedisGrants(c, r.Prefix, grantKey, nil)
		},
	}
}

func TestGrantContractRedis(t *testing.T) { grantContract(t, redisGrantEngine) }

// redisKV is the grant store's own Redis client on rdb's server, closed when the test ends.
func redisKV(t testing.TB, rdb testinfra.RedisDB) *store.RedisClient {
	c := store.NewRedisClient(store.RedisOptions{Addr: rdb.Addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}
