package app_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
)

// tripHook records the round trips to Redis that touch chat-mio's keys: each as the names of its
// commands (a pipeline or a MULTI is one round trip).
type tripHook struct {
	mu    sync.Mutex
	trips []string
}

func (h *tripHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *tripHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.note([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

func (h *tripHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.note(cmds)
		return next(ctx, cmds)
	}
}

func (h *tripHook) note(cmds []redis.Cmder) {
	chat := false
	names := make([]string, 0, len(cmds))
	for _, c := range cmds {
		names = append(names, c.Name())
		for _, a := range c.Args()[1:] {
			if s, ok := a.(string); ok && strings.Contains(s, "chat:") {
				chat = true
			}
		}
	}
	if chat {
		h.mu.Lock()
		h.trips = append(h.trips, strings.Join(names, " "))
		h.mu.Unlock()
	}
}

// take returns the round trips recorded so far and starts afresh.
func (h *tripHook) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.trips
	h.trips = nil
	return out
}

// A plain chat message from a channel costs chat-mio two round trips to Redis: the session with
// the event's kept reply, then the exchange, the route and the reply in one MULTI. A redelivery
// costs one; a command that remembers nothing, the load and the kept reply.
func TestChatMessageIsTwoRedisRoundTrips(t *testing.T) {
	at := time.Date(2026, 1, 1, 9, 0, 0, 0, mustTokyo(t))
	e := newEnv(t, withConfig(func(c *app.Config) { c.Now = func() time.Time { return at } }))
	const day = "20260101"
	hook := &tripHook{}
	e.rdb.AddHook(hook)
	req := &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: "おはよう", EventId: "ev-rt-1"}
	res := e.sendReq(t, req)
	load := "hgetall smembers lrange get get"
	if got, want := hook.take(), []string{load, "multi hset expire rpush ltrim expire sadd expire set exec"}; !slices.Equal(got, want) {
		t.Fatalf("round trips of a chat message:\n%q\nwant\n%q", got, want)
	}
	// What the one write left: the exchange in memory and the reply kept, each with its lifetime.
	sess, kept, err := e.store.LoadTurn(t.Context(), session, day, 20, session+"|ev-rt-1")
	if err != nil || kept == nil || sess.PrevPrimaryRoute != "CHAT" || len(sess.Memory) != 2 || sess.Memory[1].Text != text(res) {
		t.Fatalf("after the message: %+v, kept %d bytes, %v", sess, len(kept), err)
	}
	for key, want := range map[string]time.Duration{
		"chat:reply:" + session + "|ev-rt-1":      24 * time.Hour,
		"chat:session:" + session + ":mem:" + day: 48 * time.Hour,
		"chat:session:" + session:                 time.Hour,
	} {
		ttl, err := e.rdb.PTTL(t.Context(), e.prefix+key).Result()
		if err != nil || ttl <= want-time.Minute || ttl > want {
			t.Errorf("%s lives %v (%v), want about %v", key, ttl, err, want)
		}
	}

	// The redelivered event: the load alone answers it.
	hook.take() // the checks above
	e.sendReq(t, req)
	if got := hook.take(); !slices.Equal(got, []string{load}) {
		t.Fatalf("round trips of a redelivery: %q", got)
	}
	// /help remembers nothing: its reply is kept by a plain SET.
	e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: "/help", EventId: "ev-rt-2"})
	if got := hook.take(); !slices.Equal(got, []string{load, "set"}) {
		t.Fatalf("round trips of /help: %q", got)
	}
}

// A handled message logs one line at info, at its end, saying what message it was; the line
// at its start is at debug.
func TestOneInfoLinePerMessage(t *testing.T) {
	e := newEnv(t)
	e.send(t, approver, "おはよう")
	// The second plain chat message: its route is the previous one, logged at debug.
	res := e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: "元気？", EventId: "ev-log-1"})
	var info []map[string]any
	received := 0
	for _, l := range e.logs.Records() {
		if l["job_id"] != res.GetJobId() {
			continue
		}
		if l["level"] == "INFO" {
			info = append(info, l)
		}
		if l["msg"] == "message.received" {
			received++
			if l["level"] != "DEBUG" {
				t.Errorf("message.received at %v", l["level"])
			}
		}
	}
	if received != 1 {
		t.Errorf("%d message.received lines, want 1 at debug", received)
	}
	if len(info) != 1 || info[0]["msg"] != "message.replied" {
		t.Fatalf("info lines of one message: %v", info)
	}
	l := info[0]
	for k, want := range map[string]any{"session_id": session, "channel": "line", "event_id": "ev-log-1", "action": false,
		"reply_job_id": res.GetJobId(), "messages": float64(1), "async_pending": false} {
		if l[k] != want {
			t.Errorf("message.replied %s = %v, want %v", k, l[k], want)
		}
	}
}
