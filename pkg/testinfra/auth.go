package testinfra

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

// testKey derives an identity's key from its name, so every test that wires services together
// gets matching credentials without sharing state. Only tests use these keys.
func testKey(identity string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("picoclaw-test-key:" + identity))
	return ed25519.NewKeyFromSeed(seed[:])
}

// TestPublicKeys lists the test keys of every identity as auth.public_keys entries.
func TestPublicKeys() []string {
	var out []string
	for _, id := range svcauth.Identities() {
		pub := testKey(id).Public().(ed25519.PublicKey)
		out = append(out, id+"="+base64.StdEncoding.EncodeToString(pub))
	}
	return out
}

// TestServiceKey is an identity's test private key (PICOCLAW_SERVICE_KEY form).
func TestServiceKey(identity string) string {
	return base64.StdEncoding.EncodeToString(testKey(identity).Seed())
}

// Auth is the auth section of a test service running as identity.
func Auth(identity string) config.Auth {
	return config.Auth{PublicKeys: TestPublicKeys(), ServiceKey: config.Secret(TestServiceKey(identity))}
}

// Credentials are identity's test credentials.
func Credentials(t testing.TB, identity string) *svcauth.Credentials {
	t.Helper()
	c, err := svcauth.Load(identity, Auth(identity))
	if err != nil {
		t.Fatalf("test credentials of %s: %v", identity, err)
	}
	return c
}

// AuthEnv is the environment of a test process running as identity.
func AuthEnv(identity string) []string {
	keys := TestPublicKeys()
	joined := ""
	for i, k := range keys {
		if i > 0 {
			joined += ","
		}
		joined += k
	}
	return []string{"PICOCLAW_SERVICE_KEY=" + TestServiceKey(identity), "PICOCLAW_AUTH_PUBLIC_KEYS=" + joined}
}
