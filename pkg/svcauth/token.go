package svcauth

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Token kinds: a service token proves the caller on one call; a principal assertion is a
// gateway's word for the channel user it authenticated. The kind is signed, so one can never
// stand in for the other.
const (
	kindService   = "svc"
	kindPrincipal = "principal"
)

const (
	// serviceTokenTTL bounds a captured service token's use; clients renew well before.
	serviceTokenTTL = 5 * time.Minute
	// PrincipalTTL bounds how long chat-mio may act for a user on one inbound message (a
	// proposal can take minutes before approval is asked); a message whose user's assertion is
	// reused (vouchReuse) has at least PrincipalTTL minus vouchReuse of it.
	PrincipalTTL = 15 * time.Minute
	leeway       = 30 * time.Second
)

var (
	// ErrUnauthenticated means the caller proved nothing (no token, a bad signature, expired).
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrForbidden means a proven caller may not do what it asked.
	ErrForbidden = errors.New("permission denied")
)

type claims struct {
	Kind    string `json:"knd"`
	Channel string `json:"ch,omitempty"`
	jwt.RegisteredClaims
}

func parser(now time.Time) *jwt.Parser {
	return jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithLeeway(leeway), jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithTimeFunc(func() time.Time { return now }))
}

func (c *Credentials) sign(cl claims) (string, error) {
	s, err := jwt.NewWithClaims(jwt.SigningMethodEdDSA, cl).SignedString(c.key)
	if err != nil {
		return "", fmt.Errorf("sign %s token: %w", cl.Kind, err)
	}
	return s, nil
}

// parse checks the signature against the issuer's public key and the standard claims.
func (c *Credentials) parse(raw, kind string, now time.Time) (*claims, error) {
	var cl claims
	_, err := parser(now).ParseWithClaims(raw, &cl, func(t *jwt.Token) (any, error) {
		iss, _ := t.Claims.GetIssuer()
		k, ok := c.peers[iss]
		if !ok {
			return nil, fmt.Errorf("unknown issuer %q", iss)
		}
		return ed25519.PublicKey(k), nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	if cl.Kind != kind {
		return nil, fmt.Errorf("%w: a %q token where a %q token is needed", ErrUnauthenticated, cl.Kind, kind)
	}
	return &cl, nil
}

// ServiceToken returns a token that proves c.Self to the target identity. Tokens are cached
// and renewed when less than half their life is left, so signing is rare.
func (c *Credentials) ServiceToken(target string, now time.Time) (string, error) {
	return c.minted.get(target, now, func() (string, time.Time, error) {
		exp := now.Add(serviceTokenTTL)
		tok, err := c.sign(claims{Kind: kindService, RegisteredClaims: jwt.RegisteredClaims{
			Issuer: c.Self, Audience: jwt.ClaimStrings{target},
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp)}})
		return tok, exp, err
	})
}

// VerifyService returns the identity a service token proves, when it was issued for c.Self.
func (c *Credentials) VerifyService(raw string, now time.Time) (string, error) {
	if raw == "" {
		return "", fmt.Errorf("%w: no service token", ErrUnauthenticated)
	}
	if v, ok := c.verified.lookup(raw, now); ok {
		return v.Issuer, nil
	}
	cl, err := c.parse(raw, kindService, now)
	if err != nil {
		return "", err
	}
	aud, _ := cl.GetAudience()
	if len(aud) != 1 || aud[0] != c.Self {
		return "", fmt.Errorf("%w: token is for %v, not %s", ErrUnauthenticated, aud, c.Self)
	}
	c.verified.store(raw, verifiedToken{Issuer: cl.Issuer, Expires: cl.ExpiresAt.Time}, now)
	return cl.Issuer, nil
}

// mintCache holds the tokens a client sends, one per target.
type mintCache struct {
	mu     sync.Mutex
	tokens map[string]mintedToken
}

type mintedToken struct {
	raw     string
	expires time.Time
}

func (m *mintCache) get(target string, now time.Time, mint func() (string, time.Time, error)) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.tokens[target]; ok && now.Add(serviceTokenTTL/2).Before(t.expires) {
		return t.raw, nil
	}
	raw, exp, err := mint()
	if err != nil {
		return "", err
	}
	if m.tokens == nil {
		m.tokens = map[string]mintedToken{}
	}
	m.tokens[target] = mintedToken{raw: raw, expires: exp}
	return raw, nil
}

// verifyCache remembers tokens whose signature was checked until they expire, so a caller's
// token costs one signature check per renewal, not one per call. Entries are keyed by the
// token's SHA-256, not the token itself: principal assertions, one per active user a minute,
// would otherwise be held whole. A holder — the calling identity for a service token (all its
// replicas), the voucher, channel and user for an assertion — keeps its holderKept most
// recently used tokens: replicas of one service, or of a gateway vouching for one user, each
// send their own, and each is used again and again; a renewal takes the place of the one least
// recently used, so the cache holds a few entries per caller or active user, not one per
// renewal until each expires. When it is full anyway, the expired entries go, then a quarter of
// the rest at random, not all of it (a cache emptied whenever a bound's worth of users were
// active cost a signature check per message at every service a message passes).
type verifyCache struct {
	mu      sync.Mutex
	max     int
	entries map[[sha256.Size]byte]cachedToken
	// kept is each holder's entries, least recently used first.
	kept map[string][][sha256.Size]byte
}

type cachedToken struct {
	verifiedToken
	holder string
}

type verifiedToken struct {
	Issuer  string
	Channel string
	Subject string
	Expires time.Time
}

func (t verifiedToken) holder() string { return t.Issuer + "\x00" + t.Channel + "\x00" + t.Subject }

// holderKept is how many tokens of one holder are remembered at once: more than the replicas of
// a service that call one service at the same time.
const holderKept = 8

// verifyCacheMax bounds the service tokens remembered (a few per caller), vouchCacheMax the
// principal assertions (a few per user active in the last quarter of an hour; see vouchReuse).
// Each is a cache of its own.
const (
	verifyCacheMax = 4096
	vouchCacheMax  = 4096
)

func (v *verifyCache) lookup(raw string, now time.Time) (verifiedToken, bool) {
	key := sha256.Sum256([]byte(raw))
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.entries[key]
	if !ok || !now.Before(e.Expires.Add(leeway)) {
		return verifiedToken{}, false
	}
	// Used: last in its holder's list.
	if keys := v.kept[e.holder]; len(keys) > 1 {
		if i := slices.Index(keys, key); i >= 0 && i < len(keys)-1 {
			copy(keys[i:], keys[i+1:])
			keys[len(keys)-1] = key
		}
	}
	return e.verifiedToken, true
}

func (v *verifyCache) store(raw string, e verifiedToken, now time.Time) {
	key, holder := sha256.Sum256([]byte(raw)), e.holder()
	v.mu.Lock()
	defer v.mu.Unlock()
	limit := v.max
	if limit <= 0 {
		limit = verifyCacheMax
	}
	if v.entries == nil {
		v.entries = map[[sha256.Size]byte]cachedToken{}
		v.kept = map[string][][sha256.Size]byte{}
	}
	if _, ok := v.entries[key]; ok {
		return
	}
	if keys := v.kept[holder]; len(keys) >= holderKept {
		v.drop(keys[0])
	}
	if len(v.entries) >= limit {
		for k, old := range v.entries {
			if !now.Before(old.Expires.Add(leeway)) {
				v.drop(k)
			}
		}
		for k := range v.entries {
			if len(v.entries) < limit-limit/4 {
				break
			}
			v.drop(k)
		}
	}
	v.entries[key] = cachedToken{verifiedToken: e, holder: holder}
	v.kept[holder] = append(v.kept[holder], key)
}

// drop removes the entry under k and its place in its holder's list.
func (v *verifyCache) drop(k [sha256.Size]byte) {
	e, ok := v.entries[k]
	if !ok {
		return
	}
	delete(v.entries, k)
	keys := slices.DeleteFunc(v.kept[e.holder], func(x [sha256.Size]byte) bool { return x == k })
	if len(keys) == 0 {
		delete(v.kept, e.holder)
	} else {
		v.kept[e.holder] = keys
	}
}
