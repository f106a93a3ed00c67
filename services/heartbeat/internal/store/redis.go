//go:build !sqliteonly

// Package store keeps the latest picture of every agent in Redis or in the embedded state
// engine (SQLite), so a restart of the heartbeat service keeps it; one contract for both.
package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
)

// maxRetries bounds optimistic retries when two updates of one agent race.
const maxRetries = 32

// Redis stores one JSON value per agent (per replica: the key is domain.Beat.Key) under
// <prefix>heartbeat:agent:<key> and the set of known keys under <prefix>heartbeat:agents.
type Redis struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRedis returns the store; prefix is the suite's redis.key_prefix.
func NewRedis(rdb redis.UniversalClient, prefix string) *Redis {
	return &Redis{rdb: rdb, prefix: prefix + "heartbeat:"}
}

func (r *Redis) agentKey(id string) string { return r.prefix + "agent:" + id }
func (r *Redis) indexKey() string          { return r.prefix + "agents" }

// Update implements app.Store with WATCH/MULTI: a concurrent write to the same agent makes the
// transaction fail and fn run again on the fresh value.
func (r *Redis) Update(ctx context.Context, id string, fn func(cur *domain.Agent) *domain.Agent) error {
	key := r.agentKey(id)
	txf := func(tx *redis.Tx) error {
		raw, err := tx.Get(ctx, key).Bytes()
		missing := errors.Is(err, redis.Nil)
		if err != nil && !missing {
			return err
		}
		data, err := step(key, raw, missing, fn)
		if err != nil || data == nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, key, data, 0)
			p.SAdd(ctx, r.indexKey(), id)
			return nil
		})
		return err
	}
	for attempt := range maxRetries {
		err := r.rdb.Watch(ctx, txf, key)
		if errors.Is(err, redis.TxFailedErr) {
			// Jittered pause so racing writers stop colliding in lockstep.
			pause := time.Duration(rand.Int64N(int64(attempt+1) * int64(time.Millisecond)))
			select {
			case <-ctx.Done():
				return fmt.Errorf("update agent %s: %w", id, ctx.Err())
			case <-time.After(pause):
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("update agent %s: %w", id, err)
		}
		return nil
	}
	return fmt.Errorf("update agent %s: too much contention", id)
}

// Delete implements app.Store: the agent's value and its id in the index go together.
func (r *Redis) Delete(ctx context.Context, key string) (*domain.Agent, error) {
	var get *redis.StringCmd
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, r.agentKey(key))
		p.Del(ctx, r.agentKey(key))
		p.SRem(ctx, r.indexKey(), key)
		return nil
	})
	raw, gerr := get.Bytes()
	if errors.Is(gerr, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("forget agent %s: %w", key, err)
	}
	a, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", key, err)
	}
	return &a, nil
}

// List implements app.Store.
func (r *Redis) List(ctx context.Context) ([]domain.Agent, error) {
	ids, err := r.rdb.SMembers(ctx, r.indexKey()).Result()
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = r.agentKey(id)
	}
	vals, err := r.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	out := make([]domain.Agent, 0, len(vals))
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue // removed between SMEMBERS and MGET
		}
		a, err := decode([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", keys[i], err)
		}
		out = append(out, a)
	}
	return out, nil
}

// Ping checks the connection (readiness).
func (r *Redis) Ping(ctx context.Context) error { return r.rdb.Ping(ctx).Err() }
