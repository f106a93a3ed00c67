package svcauth

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Principal is a channel user whom a gateway (or the terminal) authenticated and vouched for.
type Principal struct {
	Channel string
	User    string
	// Voucher is the identity that signed the assertion.
	Voucher string
	// Raw is the signed assertion, forwarded as it is on calls made for this user.
	Raw string
}

// ID is the principal as "channel:user".
func (p Principal) ID() string { return p.Channel + ":" + p.User }

// vouchers says which identity may vouch for the users of which channel: the one that checks
// that channel's signatures (LINE, Slack) or owns the terminal.
var vouchers = map[string]string{"line": GatewayLine, "slack": GatewaySlack, "cli": CLI}

// VoucherFor returns the identity that vouches for a channel's users.
func VoucherFor(channel string) (string, bool) {
	v, ok := vouchers[channel]
	return v, ok
}

// Vouch signs an assertion that user is who they are on channel; only the channel's voucher
// may sign one.
func (c *Credentials) Vouch(channel, user string, now time.Time) (string, error) {
	if v, ok := vouchers[channel]; !ok || v != c.Self {
		return "", fmt.Errorf("%w: %s cannot vouch for %s users", ErrForbidden, c.Self, channel)
	}
	if user == "" {
		return "", fmt.Errorf("vouch for %s: empty user id", channel)
	}
	return c.vouches.get(channel+"\x00"+user, now, func() (string, error) {
		return c.sign(claims{Kind: kindPrincipal, Channel: channel, RegisteredClaims: jwt.RegisteredClaims{
			Issuer: c.Self, Subject: user, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(PrincipalTTL))}})
	})
}

// vouchReuse is how long one assertion for a user is given to that user's next messages: each
// still carries about PrincipalTTL minus this (14m40s), and a busy user's messages cost one
// signature (and one check per service they pass) per window instead of one each.
const vouchReuse = 20 * time.Second

// vouchMintMax bounds the users whose current assertion is kept (those active in the last window).
const vouchMintMax = 4096

// vouchCache holds the assertion last signed for each user, for vouchReuse.
type vouchCache struct {
	mu      sync.Mutex
	entries map[string]signedVouch
}

type signedVouch struct {
	raw    string
	signed time.Time // wall clock, as the assertion's iat and exp
}

func (v *vouchCache) get(key string, now time.Time, sign func() (string, error)) (string, error) {
	// The assertion's times are wall-clock times: so is the reuse window (a monotonic reading
	// would hide a clock that was stepped since).
	now = now.Round(0)
	v.mu.Lock()
	defer v.mu.Unlock()
	if e, ok := v.entries[key]; ok && fresh(e, now) {
		return e.raw, nil
	}
	raw, err := sign()
	if err != nil {
		return "", err
	}
	if v.entries == nil {
		v.entries = map[string]signedVouch{}
	}
	if _, ok := v.entries[key]; !ok && len(v.entries) >= vouchMintMax {
		// Full: the stale go first, then a quarter of the rest at random (emptied whole, a
		// bound's worth of active users would each be signed for again).
		for k, e := range v.entries {
			if !fresh(e, now) {
				delete(v.entries, k)
			}
		}
		for k := range v.entries {
			if len(v.entries) < vouchMintMax-vouchMintMax/4 {
				break
			}
			delete(v.entries, k)
		}
	}
	v.entries[key] = signedVouch{raw: raw, signed: now}
	return raw, nil
}

// fresh: signed within the last vouchReuse, and not in the future.
func fresh(e signedVouch, now time.Time) bool {
	age := now.Sub(e.signed)
	return age >= 0 && age < vouchReuse
}

// VerifyPrincipal checks a principal assertion: signed by the voucher of its channel, not expired.
func (c *Credentials) VerifyPrincipal(raw string, now time.Time) (Principal, error) {
	if v, ok := c.vouched.lookup(raw, now); ok {
		return Principal{Channel: v.Channel, User: v.Subject, Voucher: v.Issuer, Raw: raw}, nil
	}
	cl, err := c.parse(raw, kindPrincipal, now)
	if err != nil {
		return Principal{}, err
	}
	if v, ok := vouchers[cl.Channel]; !ok || v != cl.Issuer {
		return Principal{}, fmt.Errorf("%w: %s may not vouch for %q users", ErrUnauthenticated, cl.Issuer, cl.Channel)
	}
	if cl.Subject == "" {
		return Principal{}, fmt.Errorf("%w: assertion without a user", ErrUnauthenticated)
	}
	c.vouched.store(raw, verifiedToken{Issuer: cl.Issuer, Channel: cl.Channel, Subject: cl.Subject, Expires: cl.ExpiresAt.Time}, now)
	return Principal{Channel: cl.Channel, User: cl.Subject, Voucher: cl.Issuer, Raw: raw}, nil
}

type principalKey struct{}
type callerKey struct{}

// WithPrincipal makes calls made with ctx carry p's assertion (the server side puts the
// verified principal here; a gateway puts the assertion it signed).
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the verified principal of the request being served.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok && p.Raw != ""
}

// CallerFrom returns the identity that made the request being served ("" when none).
func CallerFrom(ctx context.Context) string {
	s, _ := ctx.Value(callerKey{}).(string)
	return s
}

func withCaller(ctx context.Context, caller string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}
