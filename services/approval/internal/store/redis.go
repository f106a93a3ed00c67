//go:build !sqliteonly

package store

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// RedisGrants keeps the Auto-Approve grant in one Redis key whose TTL is the grant's lifetime.
// The value is sealed with an HMAC under a key only approval holds: anyone else who can write to
// Redis (another service, a local user of an unprotected Redis) cannot make or widen a grant —
// a value without a valid seal reads as no grant at all.
type RedisGrants struct {
	rdb RedisKV
	key string
	grantSeal
}

// RedisKV is what the grant store needs of a Redis client (RedisClient).
type RedisKV interface {
	// Get returns the value of key; ok is false when there is no such key.
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	// Set sets key to value, expiring after ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// GetDel returns the value of key and deletes the key; ok is false when there was none.
	GetDel(ctx context.Context, key string) (value []byte, ok bool, err error)
}

var _ app.GrantStore = (*RedisGrants)(nil)

// NewRedisGrants stores the grant under keyPrefix + "approval:auto_approve", sealed with
// sealKey (derive it from a secret only approval holds, see GrantSealKey).
func NewRedisGrants(rdb RedisKV, keyPrefix string, sealKey []byte, log *slog.Logger) *RedisGrants {
	key := keyPrefix + "approval:auto_approve"
	return &RedisGrants{rdb: rdb, key: key, grantSeal: newGrantSeal(sealKey, key, log)}
}

// Get returns the grant, or nil when there is none (or its key has expired, or its seal fails).
func (r *RedisGrants) Get(ctx context.Context) (*domain.Grant, error) {
	b, ok, err := r.rdb.Get(ctx, r.key)
	return r.read(ctx, "get", b, ok, err)
}

// read opens the grant a command (op: get or delete) read; no key is no grant.
func (r *RedisGrants) read(ctx context.Context, op string, b []byte, ok bool, err error) (*domain.Grant, error) {
	if err != nil {
		return nil, fmt.Errorf("redis %s grant: %w", op, err)
	}
	if !ok {
		return nil, nil
	}
	return r.open(ctx, b), nil
}

// Set replaces the grant; the key expires with it.
func (r *RedisGrants) Set(ctx context.Context, g domain.Grant, ttl time.Duration) error {
	b, err := r.seal(g)
	if err != nil {
		return err
	}
	if err := r.rdb.Set(ctx, r.key, b, ttl); err != nil {
		return fmt.Errorf("redis set grant: %w", err)
	}
	return nil
}

// Delete removes the grant and returns it.
func (r *RedisGrants) Delete(ctx context.Context) (*domain.Grant, error) {
	b, ok, err := r.rdb.GetDel(ctx, r.key)
	return r.read(ctx, "delete", b, ok, err)
}
