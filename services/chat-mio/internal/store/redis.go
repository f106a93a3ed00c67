//go:build !sqliteonly

// Package store keeps chat-mio's sessions: in Redis (Redis) or in the embedded state engine
// (SQLite), one contract for both.
package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// Redis is the session store. Keys (all under the configured prefix):
//
//	chat:session:<id>              hash: local_only, prev_route
//	chat:session:<id>:pending      set of job ids waiting for approval
//	chat:session:<id>:mem:<day>    list of JSON turns; a new day starts a new list (daily cutover)
//	chat:session:<id>:note:<day>   the summary of the day before, written at the cutover
//	chat:memdays:<day>             set of the sessions with memory on day
//	chat:options:<job_id>          deliberation proposals for /pick
//	chat:reply:<id>|<event_id>     the reply to an inbound event, for its redelivery
//
// Each mutation is one Redis command (or one MULTI), so concurrent messages of a session never
// overwrite each other's changes. A message costs two round trips: the load pipeline, which also
// reads the event's kept reply, and the MULTI that records the turn and keeps its reply.
type Redis struct {
	rdb    redis.Cmdable
	prefix string
	// sessionTTL expires idle sessions; memory lists live two days so the previous day stays
	// readable across midnight without ever being used again.
	sessionTTL time.Duration
}

var _ app.SessionStore = (*Redis)(nil)

// NewRedis returns the store; prefix is config.Common.Redis.KeyPrefix.
func NewRedis(rdb redis.Cmdable, prefix string, sessionTTL time.Duration) *Redis {
	return &Redis{rdb: rdb, prefix: prefix, sessionTTL: orDefaultTTL(sessionTTL)}
}

func (r *Redis) sessionKey(id string) string { return r.prefix + "chat:session:" + id }
func (r *Redis) pendingKey(id string) string { return r.sessionKey(id) + ":pending" }
func (r *Redis) memKey(id, day string) string {
	return r.sessionKey(id) + ":mem:" + day
}
func (r *Redis) noteKey(id, day string) string { return r.sessionKey(id) + ":note:" + day }
func (r *Redis) daysKey(day string) string     { return r.prefix + "chat:memdays:" + day }
func (r *Redis) optionsKey(job string) string  { return r.prefix + "chat:options:" + job }
func (r *Redis) replyKey(event string) string  { return r.prefix + "chat:reply:" + event }

// Load implements app.SessionStore.
func (r *Redis) Load(ctx context.Context, id, day string, memoryTurns int) (domain.Session, error) {
	s, _, err := r.LoadTurn(ctx, id, day, memoryTurns, "")
	return s, err
}

// LoadTurn implements app.SessionStore: one pipeline (HGETALL, SMEMBERS, LRANGE, GET of the note
// and, with an event, GET of its reply), one round trip.
func (r *Redis) LoadTurn(ctx context.Context, id, day string, memoryTurns int, eventID string) (domain.Session, []byte, error) {
	// Queued directly rather than in a Pipelined closure, whose captured results would each be
	// an allocation of their own.
	pp := r.rdb.Pipeline()
	h := pp.HGetAll(ctx, r.sessionKey(id))
	p := pp.SMembers(ctx, r.pendingKey(id))
	m := pp.LRange(ctx, r.memKey(id, day), int64(-memoryTurns), -1)
	n := pp.Get(ctx, r.noteKey(id, day))
	var rep *redis.StringCmd
	if eventID != "" {
		rep = pp.Get(ctx, r.replyKey(eventID))
	}
	_, err := pp.Exec(ctx)
	if err != nil && !errors.Is(err, redis.Nil) {
		return domain.Session{}, nil, unavailable("load", err)
	}
	s := domain.Session{ID: id, LocalOnly: h.Val()["local_only"] == "1", PrevPrimaryRoute: h.Val()["prev_route"], Pending: p.Val(),
		Memory: decodeTurns(m.Val()), Note: n.Val()}
	slices.Sort(s.Pending)
	var reply []byte
	if rep != nil && rep.Err() == nil {
		reply = []byte(rep.Val())
	}
	return s, reply, nil
}

func (r *Redis) setField(ctx context.Context, id, field, value string) error {
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, r.sessionKey(id), field, value)
		p.Expire(ctx, r.sessionKey(id), r.sessionTTL)
		return nil
	})
	if err != nil {
		return unavailable("set "+field, err)
	}
	return nil
}

// SetLocalOnly implements app.SessionStore.
func (r *Redis) SetLocalOnly(ctx context.Context, id string, on bool) error {
	v := "0"
	if on {
		v = "1"
	}
	return r.setField(ctx, id, "local_only", v)
}

// SetPrevRoute implements app.SessionStore.
func (r *Redis) SetPrevRoute(ctx context.Context, id, route string) error {
	return r.setField(ctx, id, "prev_route", route)
}

// AddPending implements app.SessionStore.
func (r *Redis) AddPending(ctx context.Context, id, jobID string) error {
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SAdd(ctx, r.pendingKey(id), jobID)
		p.Expire(ctx, r.pendingKey(id), r.sessionTTL)
		return nil
	})
	if err != nil {
		return unavailable("add pending", err)
	}
	return nil
}

// RemovePending implements app.SessionStore.
func (r *Redis) RemovePending(ctx context.Context, id, jobID string) error {
	if err := r.rdb.SRem(ctx, r.pendingKey(id), jobID).Err(); err != nil {
		return unavailable("remove pending", err)
	}
	return nil
}

// AppendTurns implements app.SessionStore.
func (r *Redis) AppendTurns(ctx context.Context, id, day string, memoryTurns int, turns ...domain.Turn) error {
	return r.RecordTurn(ctx, id, app.TurnRecord{Day: day, MemoryTurns: memoryTurns, Turns: turns})
}

// RecordTurn implements app.SessionStore: one MULTI (a plain SET for a reply alone).
func (r *Redis) RecordTurn(ctx context.Context, id string, rec app.TurnRecord) error {
	if rec.Empty() {
		return nil
	}
	if len(rec.Turns) == 0 && rec.Route == "" {
		return r.save(ctx, "reply", r.replyKey(rec.EventID), rec.Reply, rec.ReplyTTL)
	}
	encoded, err := encodeTurns(rec.Turns)
	if err != nil {
		return err
	}
	vals := make([]any, len(encoded))
	for i, t := range encoded {
		vals[i] = t
	}
	p := r.rdb.TxPipeline()
	if rec.Route != "" {
		key := r.sessionKey(id)
		p.HSet(ctx, key, "prev_route", rec.Route)
		p.Expire(ctx, key, r.sessionTTL)
	}
	if len(vals) > 0 {
		key, days := r.memKey(id, rec.Day), r.daysKey(rec.Day)
		p.RPush(ctx, key, vals...)
		p.LTrim(ctx, key, int64(-rec.MemoryTurns), -1)
		p.Expire(ctx, key, memoryTTL)
		p.SAdd(ctx, days, id)
		p.Expire(ctx, days, memoryTTL)
	}
	if rec.EventID != "" {
		p.Set(ctx, r.replyKey(rec.EventID), rec.Reply, rec.ReplyTTL)
	}
	_, err = p.Exec(ctx)
	if err != nil {
		return unavailable("record turn", err)
	}
	return nil
}

// ActiveSessions implements app.SessionStore.
func (r *Redis) ActiveSessions(ctx context.Context, day string) ([]string, error) {
	ids, err := r.rdb.SMembers(ctx, r.daysKey(day)).Result()
	if err != nil {
		return nil, unavailable("active sessions", err)
	}
	slices.Sort(ids)
	return ids, nil
}

// SaveNote implements app.SessionStore (SET NX: the first summary of a day stays).
func (r *Redis) SaveNote(ctx context.Context, id, day, note string) (bool, error) {
	ok, err := r.rdb.SetNX(ctx, r.noteKey(id, day), note, memoryTTL).Result()
	if err != nil {
		return false, unavailable("save note", err)
	}
	return ok, nil
}

// Forget implements app.SessionStore: one MULTI drops the days' memory and notes and takes the
// session out of the days' active sets, so no cutover summarises what was forgotten.
func (r *Redis) Forget(ctx context.Context, id string, days ...string) error {
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, d := range days {
			p.Del(ctx, r.memKey(id, d), r.noteKey(id, d))
			p.SRem(ctx, r.daysKey(d), id)
		}
		return nil
	})
	if err != nil {
		return unavailable("forget", err)
	}
	return nil
}

// SaveOptions implements app.SessionStore.
func (r *Redis) SaveOptions(ctx context.Context, jobID string, data []byte, ttl time.Duration) error {
	return r.save(ctx, "options", r.optionsKey(jobID), data, ttl)
}

// LoadOptions implements app.SessionStore.
func (r *Redis) LoadOptions(ctx context.Context, jobID string) ([]byte, error) {
	return r.load(ctx, "options", r.optionsKey(jobID), "options of "+jobID)
}

// save stores the blob what under key for ttl.
func (r *Redis) save(ctx context.Context, what, key string, data []byte, ttl time.Duration) error {
	if err := r.rdb.Set(ctx, key, data, ttl).Err(); err != nil {
		return unavailable("save "+what, err)
	}
	return nil
}

// load reads the blob what under key; a missing key is domain.ErrNotFound, described as missing.
func (r *Redis) load(ctx context.Context, what, key, missing string) ([]byte, error) {
	b, err := r.rdb.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%s: %w", missing, domain.ErrNotFound)
	}
	if err != nil {
		return nil, unavailable("load "+what, err)
	}
	return b, nil
}

// Ping checks the connection (readiness).
func (r *Redis) Ping(ctx context.Context) error {
	return r.rdb.Ping(ctx).Err()
}
