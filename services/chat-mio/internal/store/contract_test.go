package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

const sid = "slack:C1:1700000000.000100"

// sessionTTL is the session lifetime every engine under the contract is opened with.
const sessionTTL = time.Hour

// item names one stored thing: a session's flags, its pending set, its memory of a day,
// deliberation options of a job, the reply to an event.
type item struct {
	kind string // session, pending, memory, options, reply, note
	id   string // session id, job id or event id
	day  string // memory only
}

// engine is one implementation under the contract, on state of its own.
type engine struct {
	store app.SessionStore
	// reopen drops the store's connection and opens the same state again (a restart).
	reopen func(t *testing.T) app.SessionStore
	// ttl is the remaining lifetime of it; 0 when it never expires; the test fails when it
	// does not exist.
	ttl func(t *testing.T, it item) time.Duration
	// expire makes it expire now.
	expire func(t *testing.T, it item)
	// down is a store whose engine cannot be reached.
	down func(t *testing.T) app.SessionStore
}

func contract(t *testing.T, newEngine func(t *testing.T) engine) {
	cases := []struct {
		name string
		run  func(t *testing.T, e engine)
	}{
		{"LoadEmptySession", loadEmptySession},
		{"FlagsAndTTL", flagsAndTTL},
		{"PendingSetUnderConcurrency", pendingSetUnderConcurrency},
		{"PendingSetExpiresAsOne", pendingSetExpiresAsOne},
		{"MemoryBoundAndDays", memoryBoundAndDays},
		{"MemoryExpires", memoryExpires},
		{"OptionsAndReplies", optionsAndReplies},
		{"NotesOncePerDay", notesOncePerDay},
		{"RecordTurnWritesEveryPart", recordTurnWritesEveryPart},
		{"LoadTurnReadsTheKeptReply", loadTurnReadsTheKeptReply},
		{"RecordTurnIsAtomic", recordTurnIsAtomic},
		{"ActiveSessionsAndForget", activeSessionsAndForget},
		{"SurvivesReopen", survivesReopen},
		{"EngineDownIsUnavailable", engineDownIsUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newEngine(t)) })
	}
}

func load(t *testing.T, s app.SessionStore, day string, memoryTurns int) domain.Session {
	t.Helper()
	got, err := s.Load(context.Background(), sid, day, memoryTurns)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func loadEmptySession(t *testing.T, e engine) {
	got := load(t, e.store, "20260101", 10)
	if got.ID != sid || got.LocalOnly || got.PrevPrimaryRoute != "" || len(got.Pending) != 0 || len(got.Memory) != 0 || got.Degraded {
		t.Fatalf("empty session = %+v", got)
	}
}

func flagsAndTTL(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	must(t, s.SetLocalOnly(ctx, sid, true))
	must(t, s.SetPrevRoute(ctx, sid, "PLAN"))
	if got := load(t, s, "20260101", 10); !got.LocalOnly || got.PrevPrimaryRoute != "PLAN" {
		t.Fatalf("session = %+v", got)
	}
	if ttl := e.ttl(t, item{kind: "session", id: sid}); ttl <= 0 || ttl > sessionTTL {
		t.Fatalf("session ttl %v", ttl)
	}
	must(t, s.SetLocalOnly(ctx, sid, false))
	if got := load(t, s, "20260101", 10); got.LocalOnly || got.PrevPrimaryRoute != "PLAN" {
		t.Fatalf("after reset = %+v", got)
	}
	// An expired session reads as new, and a write after expiry does not bring the old fields back.
	must(t, s.SetLocalOnly(ctx, sid, true))
	e.expire(t, item{kind: "session", id: sid})
	if got := load(t, s, "20260101", 10); got.LocalOnly || got.PrevPrimaryRoute != "" {
		t.Fatalf("expired session = %+v", got)
	}
	must(t, s.SetPrevRoute(ctx, sid, "CHAT"))
	if got := load(t, s, "20260101", 10); got.LocalOnly || got.PrevPrimaryRoute != "CHAT" {
		t.Fatalf("written after expiry = %+v", got)
	}
	if ttl := e.ttl(t, item{kind: "session", id: sid}); ttl <= sessionTTL-time.Minute {
		t.Fatalf("session written after expiry lives %v", ttl)
	}
}

func pendingSetUnderConcurrency(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := s.AddPending(ctx, sid, fmt.Sprintf("job_20260101_%03d", i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got := load(t, s, "20260101", 10)
	if len(got.Pending) != n || got.Pending[0] != "job_20260101_000" || got.Pending[n-1] != "job_20260101_049" {
		t.Fatalf("pending = %d %v", len(got.Pending), got.Pending)
	}
	must(t, s.AddPending(ctx, sid, "job_20260101_000"))
	must(t, s.RemovePending(ctx, sid, "job_20260101_001"))
	must(t, s.RemovePending(ctx, sid, "job_20260101_999"))
	if got = load(t, s, "20260101", 10); len(got.Pending) != n-1 || got.Pending[1] != "job_20260101_002" {
		t.Fatalf("after add-again and remove: %d %v", len(got.Pending), got.Pending)
	}
	if ttl := e.ttl(t, item{kind: "pending", id: sid}); ttl <= 0 || ttl > sessionTTL {
		t.Fatalf("pending ttl %v", ttl)
	}
}

func pendingSetExpiresAsOne(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	must(t, s.AddPending(ctx, sid, "job_20260101_001"))
	must(t, s.AddPending(ctx, sid, "job_20260101_002"))
	e.expire(t, item{kind: "pending", id: sid})
	if got := load(t, s, "20260101", 10); len(got.Pending) != 0 {
		t.Fatalf("expired pending set = %v", got.Pending)
	}
	must(t, s.AddPending(ctx, sid, "job_20260101_003"))
	if got := load(t, s, "20260101", 10); len(got.Pending) != 1 || got.Pending[0] != "job_20260101_003" {
		t.Fatalf("added after expiry: %v", got.Pending)
	}
	if ttl := e.ttl(t, item{kind: "pending", id: sid}); ttl <= sessionTTL-time.Minute {
		t.Fatalf("pending set renewed to %v", ttl)
	}
}

func memoryBoundAndDays(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	at := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	for i := range 6 {
		must(t, s.AppendTurns(ctx, sid, "20260101", 4, domain.Turn{Role: "user", Text: fmt.Sprint(i), At: at.Add(time.Duration(i) * time.Minute)}))
	}
	got := load(t, s, "20260101", 4)
	if len(got.Memory) != 4 || got.Memory[0].Text != "2" || got.Memory[3].Text != "5" {
		t.Fatalf("memory = %+v", got.Memory)
	}
	if m := got.Memory[3]; m.Role != "user" || !m.At.Equal(at.Add(5*time.Minute)) {
		t.Fatalf("turn read back as %+v", m)
	}
	if got = load(t, s, "20260101", 2); len(got.Memory) != 2 || got.Memory[0].Text != "4" {
		t.Fatalf("bounded load = %+v", got.Memory)
	}
	if got = load(t, s, "20260102", 4); len(got.Memory) != 0 {
		t.Fatalf("next day sees %+v", got.Memory)
	}
	// Several turns in one call are trimmed together.
	must(t, s.AppendTurns(ctx, sid, "20260101", 4,
		domain.Turn{Role: "user", Text: "q"}, domain.Turn{Role: "assistant", Text: "a"}, domain.Turn{Role: "user", Text: "r"}))
	if got = load(t, s, "20260101", 10); len(got.Memory) != 4 || got.Memory[0].Text != "5" || got.Memory[2].Role != "assistant" {
		t.Fatalf("after a three-turn append = %+v", got.Memory)
	}
	if ttl := e.ttl(t, item{kind: "memory", id: sid, day: "20260101"}); ttl <= 0 || ttl > memoryTTL {
		t.Fatalf("memory ttl %v", ttl)
	}
	// Appending nothing writes nothing.
	must(t, s.AppendTurns(ctx, sid, "20260103", 4))
	if got = load(t, s, "20260103", 4); len(got.Memory) != 0 {
		t.Fatalf("empty append stored %+v", got.Memory)
	}
}

func memoryExpires(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	mem := item{kind: "memory", id: sid, day: "20260101"}
	must(t, s.AppendTurns(ctx, sid, "20260101", 4, domain.Turn{Role: "user", Text: "old"}))
	e.expire(t, mem)
	if got := load(t, s, "20260101", 4); len(got.Memory) != 0 {
		t.Fatalf("expired memory = %+v", got.Memory)
	}
	must(t, s.AppendTurns(ctx, sid, "20260101", 4, domain.Turn{Role: "user", Text: "new"}))
	if got := load(t, s, "20260101", 4); len(got.Memory) != 1 || got.Memory[0].Text != "new" {
		t.Fatalf("appended after expiry = %+v", got.Memory)
	}
	if ttl := e.ttl(t, mem); ttl <= memoryTTL-time.Minute {
		t.Fatalf("memory renewed to %v", ttl)
	}
}

// saveReply keeps data as the reply to event, as a turn that remembers nothing does.
func saveReply(s app.SessionStore) func(ctx context.Context, event string, data []byte, ttl time.Duration) error {
	return func(ctx context.Context, event string, data []byte, ttl time.Duration) error {
		return s.RecordTurn(ctx, sid, app.TurnRecord{EventID: event, Reply: data, ReplyTTL: ttl})
	}
}

// loadReply is the reply kept for event as LoadTurn reads it; domain.ErrNotFound when there is
// none.
func loadReply(s app.SessionStore) func(ctx context.Context, event string) ([]byte, error) {
	return func(ctx context.Context, event string) ([]byte, error) {
		_, b, err := s.LoadTurn(ctx, sid, "20260101", 4, event)
		if err == nil && b == nil {
			err = domain.ErrNotFound
		}
		return b, err
	}
}

func optionsAndReplies(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	for _, k := range []struct {
		kind string
		save func(ctx context.Context, id string, data []byte, ttl time.Duration) error
		load func(ctx context.Context, id string) ([]byte, error)
	}{
		{"options", s.SaveOptions, s.LoadOptions},
		{"reply", saveReply(s), loadReply(s)},
	} {
		const id = "job_20260101_001"
		if _, err := k.load(ctx, id); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("missing %s: %v", k.kind, err)
		}
		must(t, k.save(ctx, id, []byte{1, 2, 3}, time.Minute))
		if b, err := k.load(ctx, id); err != nil || string(b) != "\x01\x02\x03" {
			t.Fatalf("%s = %v, %v", k.kind, b, err)
		}
		if ttl := e.ttl(t, item{kind: k.kind, id: id}); ttl <= 0 || ttl > time.Minute {
			t.Fatalf("%s ttl %v", k.kind, ttl)
		}
		// Saving again replaces the value and its lifetime; no ttl keeps it for good.
		must(t, k.save(ctx, id, []byte("again"), 0))
		if b, err := k.load(ctx, id); err != nil || string(b) != "again" {
			t.Fatalf("%s replaced = %q, %v", k.kind, b, err)
		}
		if ttl := e.ttl(t, item{kind: k.kind, id: id}); ttl != 0 {
			t.Fatalf("%s saved without ttl expires in %v", k.kind, ttl)
		}
		must(t, k.save(ctx, id, []byte("short"), time.Hour))
		e.expire(t, item{kind: k.kind, id: id})
		if _, err := k.load(ctx, id); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("expired %s: %v", k.kind, err)
		}
	}
}

func survivesReopen(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	must(t, s.SetLocalOnly(ctx, sid, true))
	must(t, s.SetPrevRoute(ctx, sid, "CODE2"))
	must(t, s.AddPending(ctx, sid, "job_20260101_007"))
	must(t, s.AppendTurns(ctx, sid, "20260101", 4, domain.Turn{Role: "user", Text: "hi"}))
	must(t, s.SaveOptions(ctx, "job_20260101_007", []byte("opts"), time.Hour))
	must(t, saveReply(s)(ctx, "ev-1", []byte("reply"), time.Hour))
	s = e.reopen(t)
	got := load(t, s, "20260101", 4)
	if !got.LocalOnly || got.PrevPrimaryRoute != "CODE2" || len(got.Pending) != 1 || len(got.Memory) != 1 || got.Memory[0].Text != "hi" {
		t.Fatalf("after reopening: %+v", got)
	}
	if b, err := s.LoadOptions(ctx, "job_20260101_007"); err != nil || string(b) != "opts" {
		t.Fatalf("options after reopening: %q %v", b, err)
	}
	if b, err := loadReply(s)(ctx, "ev-1"); err != nil || string(b) != "reply" {
		t.Fatalf("reply after reopening: %q %v", b, err)
	}
}

func engineDownIsUnavailable(t *testing.T, e engine) {
	s, ctx := e.down(t), context.Background()
	for name, err := range map[string]error{
		"load":         func() error { _, err := s.Load(ctx, sid, "20260101", 4); return err }(),
		"local":        s.SetLocalOnly(ctx, sid, true),
		"route":        s.SetPrevRoute(ctx, sid, "PLAN"),
		"pending":      s.AddPending(ctx, sid, "job_20260101_001"),
		"done":         s.RemovePending(ctx, sid, "job_20260101_001"),
		"memory":       s.AppendTurns(ctx, sid, "20260101", 4, domain.Turn{Text: "x"}),
		"save options": s.SaveOptions(ctx, "job_20260101_001", []byte("x"), time.Minute),
		"load options": func() error { _, err := s.LoadOptions(ctx, "job_20260101_001"); return err }(),
		"load turn":    func() error { _, _, err := s.LoadTurn(ctx, sid, "20260101", 4, "ev"); return err }(),
		"record turn": s.RecordTurn(ctx, sid, app.TurnRecord{Day: "20260101", MemoryTurns: 4, Turns: []domain.Turn{{Text: "x"}},
			Route: "PLAN", EventID: "ev", Reply: []byte("x"), ReplyTTL: time.Minute}),
		"record reply": saveReply(s)(ctx, "ev", []byte("x"), time.Minute),
	} {
		if !errors.Is(err, domain.ErrUnavailable) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// benchmark measures what every message costs: loading the session with a full memory, and
// appending the exchange.
func benchmark(b *testing.B, s app.SessionStore) {
	ctx := context.Background()
	for i := range 20 {
		if err := s.AppendTurns(ctx, sid, "20260101", 20, domain.Turn{Role: "user", Text: fmt.Sprint("turn ", i)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.AddPending(ctx, sid, "job_20260101_001"); err != nil {
		b.Fatal(err)
	}
	b.Run("Load", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Load(ctx, sid, "20260101", 20); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendTurns", func(b *testing.B) {
		q, a := domain.Turn{Role: "user", Text: "question"}, domain.Turn{Role: "assistant", Text: "answer"}
		for b.Loop() {
			if err := s.AppendTurns(ctx, sid, "20260101", 20, q, a); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Message is one chat message with its event id: the session with the (absent) kept reply,
	// then the exchange, the route and the reply in one write.
	n := 0 // events so far: each message's is new
	b.Run("Message", func(b *testing.B) {
		q, a := domain.Turn{Role: "user", Text: "question"}, domain.Turn{Role: "assistant", Text: "answer"}
		reply := bytes.Repeat([]byte("r"), 300)
		b.ReportAllocs()
		for b.Loop() {
			n++
			event := sid + "|ev-" + strconv.Itoa(n)
			sess, kept, err := s.LoadTurn(ctx, sid, "20260101", 20, event)
			if err != nil || kept != nil || len(sess.Memory) != 20 {
				b.Fatalf("load: %d turns, kept %q, %v", len(sess.Memory), kept, err)
			}
			if err := s.RecordTurn(ctx, sid, app.TurnRecord{Day: "20260101", MemoryTurns: 20, Turns: []domain.Turn{q, a}, Route: "CHAT",
				EventID: event, Reply: reply, ReplyTTL: 24 * time.Hour}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func notesOncePerDay(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	saved, err := s.SaveNote(ctx, sid, "20260102", "昨日は認証の設計を話した")
	must(t, err)
	again, err := s.SaveNote(ctx, sid, "20260102", "second summary")
	must(t, err)
	if !saved || again {
		t.Fatalf("saved %t, second saved %t (want true, false)", saved, again)
	}
	if got := load(t, s, "20260102", 10); got.Note != "昨日は認証の設計を話した" {
		t.Fatalf("note = %q", got.Note)
	}
	if got := load(t, s, "20260103", 10); got.Note != "" {
		t.Fatalf("next day's note = %q", got.Note)
	}
	if ttl := e.ttl(t, item{kind: "note", id: sid, day: "20260102"}); ttl <= 0 || ttl > 48*time.Hour {
		t.Fatalf("note ttl %v", ttl)
	}
	// An expired note is gone, and the day can be summarised again.
	e.expire(t, item{kind: "note", id: sid, day: "20260102"})
	if got := load(t, s, "20260102", 10); got.Note != "" {
		t.Fatalf("expired note = %q", got.Note)
	}
	saved, err = s.SaveNote(ctx, sid, "20260102", "after expiry")
	must(t, err)
	if got := load(t, s, "20260102", 10); !saved || got.Note != "after expiry" {
		t.Fatalf("after expiry: saved %t, note %q", saved, got.Note)
	}
}

func activeSessionsAndForget(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	other := "line:U0123456789abcdef0123456789abcdef"
	turn := domain.Turn{Role: "user", Text: "こんにちは", At: time.Now()}
	must(t, s.AppendTurns(ctx, sid, "20260101", 10, turn))
	must(t, s.AppendTurns(ctx, other, "20260101", 10, turn))
	must(t, s.AppendTurns(ctx, sid, "20260102", 10, turn))
	ids, err := s.ActiveSessions(ctx, "20260101")
	must(t, err)
	if len(ids) != 2 || ids[0] != other || ids[1] != sid {
		t.Fatalf("active on 20260101 = %v", ids)
	}
	if ids, err = s.ActiveSessions(ctx, "20251231"); err != nil || len(ids) != 0 {
		t.Fatalf("active on a quiet day = %v, %v", ids, err)
	}
	_, err = s.SaveNote(ctx, sid, "20260102", "note")
	must(t, err)
	must(t, s.Forget(ctx, sid, "20260102", "20260101"))
	for _, day := range []string{"20260101", "20260102"} {
		if got := load(t, s, day, 10); len(got.Memory) != 0 || got.Note != "" {
			t.Fatalf("after forget, %s = %+v", day, got)
		}
	}
	if ids, err = s.ActiveSessions(ctx, "20260101"); err != nil || len(ids) != 1 || ids[0] != other {
		t.Fatalf("after forget, active on 20260101 = %v, %v", ids, err)
	}
	// The other session keeps its memory.
	if got, err := s.Load(ctx, other, "20260101", 10); err != nil || len(got.Memory) != 1 {
		t.Fatalf("other session = %+v, %v", got, err)
	}
}

// recordTurnWritesEveryPart: a turn's memory, route and kept reply in one write, each with the
// lifetime its own write gives it; each part alone changes only itself; an empty record nothing.
func recordTurnWritesEveryPart(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	const day = "20260101"
	turn := domain.Turn{Role: "user", Text: "計画を立てて", At: time.Now()}
	must(t, s.SetLocalOnly(ctx, sid, true))
	must(t, s.RecordTurn(ctx, sid, app.TurnRecord{Day: day, MemoryTurns: 10, Turns: []domain.Turn{turn, {Role: "assistant", Text: "はい"}},
		Route: "PLAN", EventID: "ev-1", Reply: []byte("reply"), ReplyTTL: time.Hour}))
	got, reply, err := s.LoadTurn(ctx, sid, day, 10, "ev-1")
	must(t, err)
	if got.PrevPrimaryRoute != "PLAN" || !got.LocalOnly || len(got.Memory) != 2 || got.Memory[0].Text != "計画を立てて" ||
		got.Memory[1].Role != "assistant" || string(reply) != "reply" {
		t.Fatalf("after RecordTurn: %+v, reply %q", got, reply)
	}
	// Each part lives as long as its own write makes it live.
	for _, c := range []struct {
		it  item
		max time.Duration
	}{
		{item{kind: "session", id: sid}, sessionTTL},
		{item{kind: "memory", id: sid, day: day}, memoryTTL},
		{item{kind: "reply", id: "ev-1"}, time.Hour},
	} {
		if ttl := e.ttl(t, c.it); ttl <= c.max-time.Minute || ttl > c.max {
			t.Errorf("%s ttl %v, want about %v", c.it.kind, ttl, c.max)
		}
	}
	if ids, err := s.ActiveSessions(ctx, day); err != nil || len(ids) != 1 || ids[0] != sid {
		t.Fatalf("active = %v, %v", ids, err)
	}
	// Without a route only the memory changes; without turns only the route; a reply alone
	// only the reply; an empty record nothing.
	must(t, s.RecordTurn(ctx, sid, app.TurnRecord{Day: day, MemoryTurns: 10, Turns: []domain.Turn{turn}}))
	must(t, s.RecordTurn(ctx, sid, app.TurnRecord{Day: day, MemoryTurns: 10, Route: "CHAT"}))
	must(t, s.RecordTurn(ctx, sid, app.TurnRecord{EventID: "ev-2", Reply: []byte("second"), ReplyTTL: time.Hour}))
	must(t, s.RecordTurn(ctx, sid, app.TurnRecord{Day: day, MemoryTurns: 10}))
	if got = load(t, s, day, 10); got.PrevPrimaryRoute != "CHAT" || !got.LocalOnly || len(got.Memory) != 3 {
		t.Fatalf("after the partial records: %+v", got)
	}
	for event, want := range map[string]string{"ev-1": "reply", "ev-2": "second"} {
		if b, err := loadReply(s)(ctx, event); err != nil || string(b) != want {
			t.Fatalf("reply to %s = %q, %v; want %q", event, b, err, want)
		}
	}
	// The day's bound applies to the record's turns as to AppendTurns's.
	must(t, s.RecordTurn(ctx, sid, app.TurnRecord{Day: day, MemoryTurns: 2, Turns: []domain.Turn{{Role: "user", Text: "x"}, {Role: "assistant", Text: "y"}},
		Route: "PLAN", EventID: "ev-3", Reply: []byte("third"), ReplyTTL: time.Hour}))
	if got = load(t, s, day, 10); len(got.Memory) != 2 || got.Memory[0].Text != "x" || got.Memory[1].Text != "y" || got.PrevPrimaryRoute != "PLAN" {
		t.Fatalf("after a bounded record: %+v", got)
	}
	// A session that has expired starts anew when a record sets its route.
	e.expire(t, item{kind: "session", id: sid})
	must(t, s.RecordTurn(ctx, sid, app.TurnRecord{Day: day, MemoryTurns: 10, Route: "CHAT", EventID: "ev-4", Reply: []byte("r")}))
	if got = load(t, s, day, 10); got.LocalOnly || got.PrevPrimaryRoute != "CHAT" {
		t.Fatalf("recorded after the session expired: %+v", got)
	}
	// A reply kept without a lifetime is kept for good.
	if ttl := e.ttl(t, item{kind: "reply", id: "ev-4"}); ttl != 0 {
		t.Fatalf("reply kept without ttl expires in %v", ttl)
	}
}

// loadTurnReadsTheKeptReply: the session as Load reads it, with the event's kept reply — none
// when no event is named, when another event's reply is kept, or when it has expired.
func loadTurnReadsTheKeptReply(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	const day = "20260101"
	must(t, s.SetPrevRoute(ctx, sid, "PLAN"))
	must(t, s.AddPending(ctx, sid, "job_20260101_001"))
	must(t, s.AppendTurns(ctx, sid, day, 10, domain.Turn{Role: "user", Text: "q"}, domain.Turn{Role: "assistant", Text: "a"}))
	_, err := s.SaveNote(ctx, sid, day, "note")
	must(t, err)
	want := load(t, s, day, 10)
	check := func(event, wantReply string) {
		t.Helper()
		got, reply, err := s.LoadTurn(ctx, sid, day, 10, event)
		must(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("LoadTurn(%q) session = %+v, want %+v", event, got, want)
		}
		if wantReply == "" && reply != nil || string(reply) != wantReply {
			t.Fatalf("LoadTurn(%q) reply = %q, want %q", event, reply, wantReply)
		}
	}
	check("", "")
	check("ev-1", "")
	must(t, saveReply(s)(ctx, "ev-1", []byte("\x00kept\xff"), time.Hour))
	check("ev-1", "\x00kept\xff")
	check("ev-2", "")
	check("", "")
	// An empty session with a kept reply: both read.
	other := "line:U0123456789abcdef0123456789abcdef"
	must(t, s.RecordTurn(ctx, other, app.TurnRecord{EventID: other + "|ev-1", Reply: []byte("r")}))
	if got, reply, err := s.LoadTurn(ctx, other, day, 10, other+"|ev-1"); err != nil || got.ID != other || len(got.Memory) != 0 || string(reply) != "r" {
		t.Fatalf("empty session: %+v, reply %q, %v", got, reply, err)
	}
	e.expire(t, item{kind: "reply", id: "ev-1"})
	check("ev-1", "")
}

// recordTurnIsAtomic: a reader never sees a kept reply without the memory and route written
// with it, and concurrent records of one session lose nothing.
func recordTurnIsAtomic(t *testing.T, e engine) {
	s, ctx := e.store, context.Background()
	const day, n = "20260101", 16
	record := func(i int) app.TurnRecord {
		return app.TurnRecord{Day: day, Turns: []domain.Turn{{Role: "user", Text: fmt.Sprint("q", i)}, {Role: "assistant", Text: fmt.Sprint("a", i)}},
			Route: "PLAN", EventID: fmt.Sprint("ev-", i), Reply: []byte(fmt.Sprint("reply ", i)), ReplyTTL: time.Hour}
	}
	// remembered reports whether the memory holds turn i's exchange, its two turns together.
	remembered := func(mem []domain.Turn, i int) bool {
		for j := 0; j+1 < len(mem); j++ {
			if mem[j].Text == fmt.Sprint("q", i) {
				return mem[j+1].Text == fmt.Sprint("a", i)
			}
		}
		return false
	}
	done := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				for i := range n {
					got, reply, err := s.LoadTurn(ctx, sid, day, 0, fmt.Sprint("ev-", i))
					if err != nil {
						t.Error(err)
						return
					}
					if reply != nil && (!remembered(got.Memory, i) || got.PrevPrimaryRoute != "PLAN") {
						t.Errorf("reply %q read without its turn: %+v", reply, got)
						return
					}
				}
			}
		})
	}
	var writers sync.WaitGroup
	for i := range n {
		writers.Go(func() {
			if err := s.RecordTurn(ctx, sid, record(i)); err != nil {
				t.Error(err)
			}
		})
	}
	writers.Wait()
	close(done)
	readers.Wait()
	got := load(t, s, day, 0)
	if len(got.Memory) != 2*n {
		t.Fatalf("memory holds %d turns, want %d", len(got.Memory), 2*n)
	}
	for i := range n {
		if !remembered(got.Memory, i) {
			t.Errorf("turn %d not remembered whole: %+v", i, got.Memory)
		}
		if b, err := loadReply(s)(ctx, fmt.Sprint("ev-", i)); err != nil || string(b) != fmt.Sprint("reply ", i) {
			t.Errorf("reply %d = %q, %v", i, b, err)
		}
	}
}
