//go:build !sqliteonly

package store

import (
	"context"
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
