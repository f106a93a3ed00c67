package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// RedisGrants keeps the Auto-Approve grant in one Redis key whose TTL is the grant's lifetime.
type RedisGrants struct {
	rdb redis.UniversalClient
	key string
}

var _ app.GrantStore = (*RedisGrants)(nil)

// NewRedisGrants stores the grant under keyPrefix + "approval:auto_approve".
func NewRedisGrants(rdb redis.UniversalClient, keyPrefix string) *RedisGrants {
	return &RedisGrants{rdb: rdb, key: keyPrefix + "approval:auto_approve"}
}

// Get returns the grant, or nil when there is none (or its key has expired).
func (r *RedisGrants) Get(ctx context.Context) (*domain.Grant, error) {
	b, err := r.rdb.Get(ctx, r.key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("redis get grant: %w", err)
	}
	var g domain.Grant
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("decode grant: %w", err)
	}
	return &g, nil
}

// Set replaces the grant; the key expires with it.
func (r *RedisGrants) Set(ctx context.Context, g domain.Grant, ttl time.Duration) error {
	b, err := json.Marshal(g)
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
	b, err := r.rdb.GetDel(ctx, r.key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("redis delete grant: %w", err)
	}
	var g domain.Grant
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, nil
	}
	return &g, nil
}
