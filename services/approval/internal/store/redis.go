package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// RedisGrants keeps the Auto-Approve grant in one Redis key whose TTL is the grant's lifetime.
// The value is sealed with an HMAC under a key only approval holds: anyone else who can write to
// Redis (another service, a local user of an unprotected Redis) cannot make or widen a grant —
// a value without a valid seal reads as no grant at all.
type RedisGrants struct {
	rdb redis.UniversalClient
	key string
	grantSeal
}

var _ app.GrantStore = (*RedisGrants)(nil)

// NewRedisGrants stores the grant under keyPrefix + "approval:auto_approve", sealed with
// sealKey (derive it from a secret only approval holds, see GrantSealKey).
func NewRedisGrants(rdb redis.UniversalClient, keyPrefix string, sealKey []byte, log *slog.Logger) *RedisGrants {
	key := keyPrefix + "approval:auto_approve"
	return &RedisGrants{rdb: rdb, key: key, grantSeal: newGrantSeal(sealKey, key, log)}
}

// GrantSealKey derives the grant seal from the audit key (kept apart from the audit MACs).
func GrantSealKey(auditKey []byte) []byte {
	m := hmac.New(sha256.New, auditKey)
	m.Write([]byte("picoclaw auto-approve grant seal"))
	return m.Sum(nil)
}

// grantSeal seals the grant for one place of storage (both engines): the MAC covers that
// place's name too, so a sealed value copied elsewhere does not open.
type grantSeal struct {
	key   []byte
	place string
	log   *slog.Logger
}

func newGrantSeal(key []byte, place string, log *slog.Logger) grantSeal {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return grantSeal{key: key, place: place, log: log}
}

type sealedGrant struct {
	Grant json.RawMessage `json:"grant"`
	MAC   string          `json:"mac"`
}

func (s grantSeal) mac(grant []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(s.place))
	m.Write([]byte{0})
	m.Write(grant)
	return m.Sum(nil)
}

// seal is the stored form of g.
func (s grantSeal) seal(g domain.Grant) ([]byte, error) {
	if len(s.key) == 0 {
		return nil, errors.New("grant store has no seal key")
	}
	raw, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	return json.Marshal(sealedGrant{Grant: raw, MAC: base64.StdEncoding.EncodeToString(s.mac(raw))})
}

// open checks the seal; a value that fails it is not a grant.
func (s grantSeal) open(ctx context.Context, b []byte) *domain.Grant {
	var sg sealedGrant
	if err := json.Unmarshal(b, &sg); err != nil || len(s.key) == 0 {
		s.log.ErrorContext(ctx, "approval.grant_unsealed", slog.String("effect", "ignored: Auto-Approve is off"))
		return nil
	}
	want, err := base64.StdEncoding.DecodeString(sg.MAC)
	if err != nil || !hmac.Equal(want, s.mac(sg.Grant)) {
		s.log.ErrorContext(ctx, "approval.grant_forged", slog.String("effect", "ignored: Auto-Approve is off"))
		return nil
	}
	var g domain.Grant
	if err := json.Unmarshal(sg.Grant, &g); err != nil {
		return nil
	}
	return &g
}

// Get returns the grant, or nil when there is none (or its key has expired, or its seal fails).
func (r *RedisGrants) Get(ctx context.Context) (*domain.Grant, error) {
	return r.read(ctx, "get", r.rdb.Get(ctx, r.key))
}

// read opens the grant cmd (op: get or delete) read; no key is no grant.
func (r *RedisGrants) read(ctx context.Context, op string, cmd *redis.StringCmd) (*domain.Grant, error) {
	b, err := cmd.Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("redis %s grant: %w", op, err)
	}
	return r.open(ctx, b), nil
}

// Set replaces the grant; the key expires with it.
func (r *RedisGrants) Set(ctx context.Context, g domain.Grant, ttl time.Duration) error {
	b, err := r.seal(g)
	if err != nil {
		return err
	}
	if err := r.rdb.Set(ctx, r.key, b, ttl).Err(); err != nil {
		return fmt.Errorf("redis set grant: %w", err)
	}
	return nil
}

// Delete removes the grant and returns it.
func (r *RedisGrants) Delete(ctx context.Context) (*domain.Grant, error) {
	return r.read(ctx, "delete", r.rdb.GetDel(ctx, r.key))
}
