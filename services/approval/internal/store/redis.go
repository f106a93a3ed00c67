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
	rdb  redis.UniversalClient
	key  string
	seal []byte
	log  *slog.Logger
}

var _ app.GrantStore = (*RedisGrants)(nil)

// NewRedisGrants stores the grant under keyPrefix + "approval:auto_approve", sealed with
// sealKey (derive it from a secret only approval holds, see GrantSealKey).
func NewRedisGrants(rdb redis.UniversalClient, keyPrefix string, sealKey []byte, log *slog.Logger) *RedisGrants {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &RedisGrants{rdb: rdb, key: keyPrefix + "approval:auto_approve", seal: sealKey, log: log}
}

// GrantSealKey derives the grant seal from the audit key (kept apart from the audit MACs).
func GrantSealKey(auditKey []byte) []byte {
	m := hmac.New(sha256.New, auditKey)
	m.Write([]byte("picoclaw auto-approve grant seal"))
	return m.Sum(nil)
}

type sealedGrant struct {
	Grant json.RawMessage `json:"grant"`
	MAC   string          `json:"mac"`
}

func (r *RedisGrants) mac(grant []byte) []byte {
	m := hmac.New(sha256.New, r.seal)
	m.Write([]byte(r.key))
	m.Write([]byte{0})
	m.Write(grant)
	return m.Sum(nil)
}

// open checks the seal; a value that fails it is not a grant.
func (r *RedisGrants) open(ctx context.Context, b []byte) *domain.Grant {
	var s sealedGrant
	if err := json.Unmarshal(b, &s); err != nil || len(r.seal) == 0 {
		r.log.ErrorContext(ctx, "approval.grant_unsealed", slog.String("effect", "ignored: Auto-Approve is off"))
		return nil
	}
	want, err := base64.StdEncoding.DecodeString(s.MAC)
	if err != nil || !hmac.Equal(want, r.mac(s.Grant)) {
		r.log.ErrorContext(ctx, "approval.grant_forged", slog.String("effect", "ignored: Auto-Approve is off"))
		return nil
	}
	var g domain.Grant
	if err := json.Unmarshal(s.Grant, &g); err != nil {
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
	if len(r.seal) == 0 {
		return errors.New("grant store has no seal key")
	}
	raw, err := json.Marshal(g)
	if err != nil {
		return err
	}
	b, err := json.Marshal(sealedGrant{Grant: raw, MAC: base64.StdEncoding.EncodeToString(r.mac(raw))})
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
