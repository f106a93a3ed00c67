// Package svcauth gives every service of the suite its own identity: an Ed25519 key that signs
// short-lived, audience-bound tokens on every internal call, an authorization matrix that says
// which identity may call which procedure, and signed principal assertions with which a gateway
// vouches for the channel user it authenticated.
package svcauth

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The suite's identities. cli is the terminal channel (`picoclaw chat`, `picoclaw run`).
const (
	GatewayLine  = "gateway-line"
	GatewaySlack = "gateway-slack"
	ChatMio      = "chat-mio"
	RouterShiro  = "router-shiro"
	CoderOrder   = "coder-order"
	Approval     = "approval"
	Executor     = "executor"
	Heartbeat    = "heartbeat"
	CLI          = "cli"
)

// Identities lists every identity in a stable order.
func Identities() []string {
	return []string{GatewayLine, GatewaySlack, ChatMio, RouterShiro, CoderOrder, Approval, Executor, Heartbeat, CLI}
}

// Services are the identities that run as services (every one but cli).
func Services() []string {
	return slices.DeleteFunc(Identities(), func(s string) bool { return s == CLI })
}

// KnownIdentity reports whether name is one of the suite's identities.
func KnownIdentity(name string) bool { return slices.Contains(Identities(), name) }

// Credentials are one identity's signing key and the public keys of every identity it trusts.
type Credentials struct {
	Self  string
	key   ed25519.PrivateKey
	peers map[string]ed25519.PublicKey

	minted   mintCache
	verified verifyCache
	vouched  verifyCache
	vouches  vouchCache
}

var (
	// ErrNoKey means the identity's private key is missing.
	ErrNoKey = errors.New("no service key")
	// ErrBadKey means a key does not decode to an Ed25519 key.
	ErrBadKey = errors.New("not an Ed25519 key (base64 of 32 bytes)")
)

// NewCredentials builds self's credentials from its private key (base64 of the 32-byte seed)
// and the public keys as "name=base64" entries; every identity of the suite must be listed, and
// self's entry must match its private key.
func NewCredentials(self, privateKey string, publicKeys []string) (*Credentials, error) {
	if !KnownIdentity(self) {
		return nil, fmt.Errorf("unknown identity %q", self)
	}
	if strings.TrimSpace(privateKey) == "" {
		return nil, ErrNoKey
	}
	seed, err := decodeKey(privateKey)
	if err != nil {
		return nil, err
	}
	c := &Credentials{Self: self, key: ed25519.NewKeyFromSeed(seed), peers: map[string]ed25519.PublicKey{}, vouched: verifyCache{max: vouchCacheMax}}
	for _, entry := range publicKeys {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, b64, ok := strings.Cut(entry, "=")
		if !ok || !KnownIdentity(name) {
			return nil, fmt.Errorf("public key entry %q: want <identity>=<base64>, identity one of %s", clip(entry), strings.Join(Identities(), ", "))
		}
		pub, err := decodeKey(b64)
		if err != nil {
			return nil, fmt.Errorf("public key of %s: %w", name, err)
		}
		if _, dup := c.peers[name]; dup {
			return nil, fmt.Errorf("public key of %s listed twice", name)
		}
		c.peers[name] = ed25519.PublicKey(pub)
	}
	var missing []string
	for _, id := range Identities() {
		if _, ok := c.peers[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("public keys missing for %s", strings.Join(missing, ", "))
	}
	if !c.key.Public().(ed25519.PublicKey).Equal(c.peers[self]) {
		return nil, fmt.Errorf("the private key is not %s's: it does not match %s's public key", self, self)
	}
	return c, nil
}

// DeriveKey derives a symmetric key for one purpose from this identity's private key: a secret
// only this service holds, without another variable to provision (e.g. the seal of the
// gateways' inbound queue in Redis).
func (c *Credentials) DeriveKey(purpose string) []byte {
	m := hmac.New(sha256.New, c.key.Seed())
	m.Write([]byte("picoclaw derived key: " + purpose))
	return m.Sum(nil)
}

// PublicKey returns the public key of an identity the credentials trust.
func (c *Credentials) PublicKey(name string) (ed25519.PublicKey, bool) {
	k, ok := c.peers[name]
	return k, ok
}

func clip(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}

func decodeKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return b, nil
		}
	}
	return nil, ErrBadKey
}

// KeyPair is a generated identity key: the private seed and the public key, both base64.
type KeyPair struct {
	Identity string
	Private  string
	Public   string
}

// PublicEntry is the "name=base64" form the configuration lists.
func (k KeyPair) PublicEntry() string { return k.Identity + "=" + k.Public }

// Generate makes a fresh key pair for an identity.
func Generate(identity string) (KeyPair, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return KeyPair{}, fmt.Errorf("generate %s key: %w", identity, err)
	}
	return KeyPair{Identity: identity, Private: base64.StdEncoding.EncodeToString(priv.Seed()),
		Public: base64.StdEncoding.EncodeToString(pub)}, nil
}

// GenerateSuite makes a key pair for every identity of the suite.
func GenerateSuite() (map[string]KeyPair, error) {
	out := map[string]KeyPair{}
	for _, id := range Identities() {
		kp, err := Generate(id)
		if err != nil {
			return nil, err
		}
		out[id] = kp
	}
	return out, nil
}

// PublicEntries lists the "name=base64" entries of a generated suite in the stable order.
func PublicEntries(keys map[string]KeyPair) []string {
	out := make([]string, 0, len(keys))
	for _, id := range Identities() {
		if kp, ok := keys[id]; ok {
			out = append(out, kp.PublicEntry())
		}
	}
	return out
}
