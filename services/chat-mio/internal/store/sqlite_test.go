//go:build !serveronly

package store

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate/sqlstatetest"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

func openSQLite(t testing.TB, db *sqlstate.DB) *SQLite {
	t.Helper()
	s, err := NewSQLite(context.Background(), db, sessionTTL)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// where selects the rows of it: table, condition and arguments.
func where(t *testing.T, it item) (string, string, []any) {
	switch it.kind {
	case "session":
		return tableSessions, `id = ?`, []any{it.id}
	case "pending":
		return tablePending, `session = ?`, []any{it.id}
	case "memory":
		return tableMemory, `session = ? AND day = ?`, []any{it.id, it.day}
	case "options", "reply":
		return tableBlobs, `kind = ? AND id = ?`, []any{it.kind, it.id}
	case "note":
		return tableBlobs, `kind = ? AND id = ?`, []any{"note", noteID(it.id, it.day)}
	}
	t.Fatalf("unknown item %+v", it)
	return "", "", nil
}

func sqliteEngine(t *testing.T) engine {
	h := sqlstatetest.New(t)
	return engine{
		store:  openSQLite(t, h.DB()),
		reopen: func(t *testing.T) app.SessionStore { return openSQLite(t, h.Reopen()) },
		ttl: func(t *testing.T, it item) time.Duration {
			table, cond, args := where(t, it)
			// The rows of one item share one expiry, as the members of a Redis key do.
			var n, distinct int
			var exp int64
			if err := h.DB().QueryRowContext(context.Background(), `SELECT count(*), count(DISTINCT expires_at), COALESCE(max(expires_at), 0) FROM `+
				table+` WHERE `+cond, args...).Scan(&n, &distinct, &exp); err != nil {
				t.Fatal(err)
			}
			switch {
			case n == 0:
				t.Fatalf("%+v does not exist", it)
			case distinct != 1:
				t.Fatalf("the rows of %+v expire at %d different times", it, distinct)
			case exp == 0:
				return 0
			}
			return time.Until(time.UnixMilli(exp))
		},
		expire: func(t *testing.T, it item) {
			table, cond, args := where(t, it)
			if _, err := h.DB().ExecContext(context.Background(), `UPDATE `+table+` SET expires_at = ? WHERE `+cond,
				append([]any{sqlstate.NowMS() - 1}, args...)...); err != nil {
				t.Fatal(err)
			}
		},
		down: func(t *testing.T) app.SessionStore {
			return sqlstatetest.Closed(t, func(db *sqlstate.DB) app.SessionStore { return openSQLite(t, db) })
		},
	}
}

func TestSQLiteContract(t *testing.T) { contract(t, sqliteEngine) }

// The engine's sweeper deletes what has expired in every table of the store.
func TestSQLiteExpiredRowsAreSwept(t *testing.T) {
	ctx := context.Background()
	e := sqliteEngine(t)
	s := e.store
	must(t, s.SetLocalOnly(ctx, sid, true))
	must(t, s.AddPending(ctx, sid, "job_20260101_001"))
	must(t, s.AddPending(ctx, sid, "job_20260101_002"))
	must(t, s.AppendTurns(ctx, sid, "20260101", 4, domain.Turn{Text: "a"}, domain.Turn{Text: "b"}))
	must(t, s.SaveOptions(ctx, "job_20260101_001", []byte("o"), time.Hour))
	must(t, saveReply(s)(ctx, "ev-1", []byte("r"), time.Hour))
	must(t, saveReply(s)(ctx, "ev-2", []byte("kept"), 0))
	for _, it := range []item{{kind: "session", id: sid}, {kind: "pending", id: sid}, {kind: "memory", id: sid, day: "20260101"},
		{kind: "options", id: "job_20260101_001"}, {kind: "reply", id: "ev-1"}} {
		e.expire(t, it)
	}
	db := s.(*SQLite).db
	if n, err := db.Sweep(ctx); err != nil || n != 7 {
		t.Fatalf("swept %d rows (%v), want 7", n, err)
	}
	if b, err := loadReply(s)(ctx, "ev-2"); err != nil || string(b) != "kept" {
		t.Fatalf("a reply without expiry was swept: %q %v", b, err)
	}
}

// A local_only switch survives the process being killed right after it returned, both ways.
func TestSQLiteLocalOnlySurvivesSIGKILL(t *testing.T) {
	dir := t.TempDir()
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint("local_only=", on), func(t *testing.T) {
			sqlstatetest.Crash(t, dir, func(t *testing.T, dir string, out io.Writer) {
				s := openSQLite(t, sqlstatetest.OpenAt(t, filepath.Join(dir, "state.db")).DB())
				must(t, s.SetLocalOnly(context.Background(), sid, on))
			})
			s := openSQLite(t, sqlstatetest.OpenAt(t, filepath.Join(dir, "state.db")).DB())
			if got := load(t, s, "20260101", 4); got.LocalOnly != on {
				t.Fatalf("after the crash local_only = %v, want %v", got.LocalOnly, on)
			}
		})
	}
}

// Appends longer than one prepared INSERT takes keep their order and the bound.
func TestSQLiteLongAppendKeepsOrderAndBound(t *testing.T) {
	ctx, s := context.Background(), openSQLite(t, sqlstatetest.New(t).DB())
	texts := func(from, to int) []domain.Turn {
		var out []domain.Turn
		for i := from; i < to; i++ {
			out = append(out, domain.Turn{Role: "user", Text: fmt.Sprint(i)})
		}
		return out
	}
	check := func(memoryTurns int, want ...int) {
		t.Helper()
		got := load(t, s, "20260101", memoryTurns).Memory
		if len(got) != len(want) {
			t.Fatalf("memory = %+v, want texts %v", got, want)
		}
		for i, w := range want {
			if got[i].Text != fmt.Sprint(w) {
				t.Fatalf("memory = %+v, want texts %v", got, want)
			}
		}
	}
	n := 2*maxTurnsPerInsert + 1
	must(t, s.AppendTurns(ctx, sid, "20260101", 0, texts(0, n)...))
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	check(0, all...)
	// A bound smaller than the append keeps the append's last turns.
	must(t, s.AppendTurns(ctx, sid, "20260101", 3, texts(n, 2*n)...))
	check(0, 2*n-3, 2*n-2, 2*n-1)
	// A bound larger than the append keeps the newest of the older turns too.
	must(t, s.AppendTurns(ctx, sid, "20260101", maxTurnsPerInsert+3, texts(2*n, 2*n+maxTurnsPerInsert+1)...))
	want := []int{2*n - 2, 2*n - 1}
	for i := 2 * n; i < 2*n+maxTurnsPerInsert+1; i++ {
		want = append(want, i)
	}
	check(0, want...)
	check(2, want[len(want)-2:]...)
}

// Recording a turn with a route in a session that has expired starts the session anew:
// local_only is not brought back.
func TestSQLiteRecordTurnAfterSessionExpiry(t *testing.T) {
	ctx, e := context.Background(), sqliteEngine(t)
	must(t, e.store.SetLocalOnly(ctx, sid, true))
	must(t, e.store.SetPrevRoute(ctx, sid, "PLAN"))
	e.expire(t, item{kind: "session", id: sid})
	must(t, e.store.RecordTurn(ctx, sid, app.TurnRecord{Day: "20260101", MemoryTurns: 4, Route: "CHAT", Turns: []domain.Turn{{Role: "user", Text: "hi"}}}))
	if got := load(t, e.store, "20260101", 4); got.LocalOnly || got.PrevPrimaryRoute != "CHAT" || len(got.Memory) != 1 {
		t.Fatalf("after expiry: %+v", got)
	}
	if ttl := e.ttl(t, item{kind: "session", id: sid}); ttl <= sessionTTL-time.Minute {
		t.Fatalf("session written after expiry lives %v", ttl)
	}
}

func BenchmarkSQLite(b *testing.B) {
	benchmark(b, openSQLite(b, sqlstatetest.New(b).DB()))
}

// BenchmarkLoadAndRemember is what one chat message costs the store: load the session (20 turns
// of memory, one pending job, a note, a previous route) with the event's kept reply (none), then
// record the exchange with the new route and the reply.
func BenchmarkLoadAndRemember(b *testing.B) {
	ctx := context.Background()
	s := openSQLite(b, sqlstatetest.New(b).DB())
	const day, turns = "20260101", 20
	for i := range turns {
		if err := s.AppendTurns(ctx, sid, day, turns, domain.Turn{Role: "user", Text: fmt.Sprint("turn ", i)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.AddPending(ctx, sid, "job_20260101_001"); err != nil {
		b.Fatal(err)
	}
	if err := s.SetPrevRoute(ctx, sid, "CHAT"); err != nil {
		b.Fatal(err)
	}
	if _, err := s.SaveNote(ctx, sid, day, "yesterday's summary"); err != nil {
		b.Fatal(err)
	}
	q, a := domain.Turn{Role: "user", Text: "question"}, domain.Turn{Role: "assistant", Text: "answer"}
	n := 0
	for b.Loop() {
		n++
		event := fmt.Sprint(sid, "|ev-", n)
		sess, kept, err := s.LoadTurn(ctx, sid, day, turns, event)
		if err != nil {
			b.Fatal(err)
		}
		if len(sess.Memory) != turns || kept != nil {
			b.Fatalf("loaded %d turns (want %d), kept %q", len(sess.Memory), turns, kept)
		}
		if err := s.RecordTurn(ctx, sid, app.TurnRecord{Day: day, MemoryTurns: turns, Turns: []domain.Turn{q, a}, Route: "PLAN",
			EventID: event, Reply: []byte("reply"), ReplyTTL: 24 * time.Hour}); err != nil {
			b.Fatal(err)
		}
	}
}

// An append within memoryRenewSlack of the full lifetime gives its turns the day's expiry and
// leaves the earlier rows as they are; one after it renews every row of the day. The rows of a
// day always share one expiry.
func TestSQLiteMemoryRenewsOnlyPastTheSlack(t *testing.T) {
	h := sqlstatetest.New(t)
	s, ctx := openSQLite(t, h.DB()), context.Background()
	const day = "20260101"
	expiries := func() (distinct int, exp int64) {
		t.Helper()
		if err := h.DB().QueryRowContext(ctx, `SELECT count(DISTINCT expires_at), max(expires_at) FROM `+tableMemory+
			` WHERE session = ? AND day = ?`, sid, day).Scan(&distinct, &exp); err != nil {
			t.Fatal(err)
		}
		return distinct, exp
	}
	setExpiry := func(exp int64) {
		t.Helper()
		if _, err := h.DB().ExecContext(ctx, `UPDATE `+tableMemory+` SET expires_at = ? WHERE session = ? AND day = ?`, exp, sid, day); err != nil {
			t.Fatal(err)
		}
	}
	must(t, s.AppendTurns(ctx, sid, day, 10, domain.Turn{Role: "user", Text: "1"}))

	// As if 10 s had passed: within the slack, nothing is renewed.
	within := sqlstate.NowMS() + (memoryTTL - 10*time.Second).Milliseconds()
	setExpiry(within)
	must(t, s.AppendTurns(ctx, sid, day, 10, domain.Turn{Role: "assistant", Text: "2"}))
	if n, exp := expiries(); n != 1 || exp != within {
		t.Fatalf("within the slack: %d expiries, max %d; want the day's %d", n, exp, within)
	}

	// As if a minute had passed: past the slack, every row gets the full lifetime again.
	past := sqlstate.NowMS() + (memoryTTL - time.Minute).Milliseconds()
	setExpiry(past)
	before := sqlstate.NowMS()
	must(t, s.AppendTurns(ctx, sid, day, 10, domain.Turn{Role: "user", Text: "3"}))
	if n, exp := expiries(); n != 1 || exp < before+memoryTTL.Milliseconds() {
		t.Fatalf("past the slack: %d expiries, max %d; want one, at least %d", n, exp, before+memoryTTL.Milliseconds())
	}
	if got := load(t, s, day, 10); len(got.Memory) != 3 {
		t.Fatalf("memory = %+v", got.Memory)
	}

	// A lifetime beyond the full one (the clock stepped back) is set back to it, as EXPIRE does.
	setExpiry(sqlstate.NowMS() + (memoryTTL + time.Hour).Milliseconds())
	before = sqlstate.NowMS()
	must(t, s.AppendTurns(ctx, sid, day, 10, domain.Turn{Role: "assistant", Text: "4"}))
	if n, exp := expiries(); n != 1 || exp < before+memoryTTL.Milliseconds() || exp > sqlstate.NowMS()+memoryTTL.Milliseconds() {
		t.Fatalf("beyond the lifetime: %d expiries, max %d; want one, the full lifetime from now", n, exp)
	}
}

// A recorded turn on the session's route leaves its row as it is within routeRenewSlack of the
// full lifetime, and renews it past the slack; a new route is written at once.
func TestSQLiteRecordRouteRenewsOnlyPastTheSlack(t *testing.T) {
	h := sqlstatetest.New(t)
	s, ctx := openSQLite(t, h.DB()), context.Background()
	expiry := func() int64 {
		t.Helper()
		var exp int64
		if err := h.DB().QueryRowContext(ctx, `SELECT expires_at FROM `+tableSessions+` WHERE id = ?`, sid).Scan(&exp); err != nil {
			t.Fatal(err)
		}
		return exp
	}
	setExpiry := func(exp int64) {
		t.Helper()
		if _, err := h.DB().ExecContext(ctx, `UPDATE `+tableSessions+` SET expires_at = ? WHERE id = ?`, exp, sid); err != nil {
			t.Fatal(err)
		}
	}
	record := func(route string) {
		t.Helper()
		must(t, s.RecordTurn(ctx, sid, app.TurnRecord{Day: "20260101", MemoryTurns: 4, Route: route,
			Turns: []domain.Turn{{Role: "user", Text: "hi"}}}))
	}
	must(t, s.SetLocalOnly(ctx, sid, true))
	record("CHAT")

	within := sqlstate.NowMS() + (sessionTTL - 10*time.Second).Milliseconds()
	setExpiry(within)
	record("CHAT")
	if got := expiry(); got != within {
		t.Fatalf("same route within the slack: expiry %d, want the session's %d", got, within)
	}

	before := sqlstate.NowMS()
	record("PLAN")
	if got := load(t, s, "20260101", 4); got.PrevPrimaryRoute != "PLAN" || !got.LocalOnly {
		t.Fatalf("new route: %+v", got)
	}
	if got := expiry(); got < before+sessionTTL.Milliseconds() {
		t.Fatalf("new route: expiry %d, want at least %d", got, before+sessionTTL.Milliseconds())
	}

	setExpiry(sqlstate.NowMS() + (sessionTTL - time.Minute).Milliseconds())
	before = sqlstate.NowMS()
	record("PLAN")
	if got := expiry(); got < before+sessionTTL.Milliseconds() {
		t.Fatalf("same route past the slack: expiry %d, want at least %d", got, before+sessionTTL.Milliseconds())
	}

	// A lifetime beyond the full one (the clock stepped back) is set back to it, as EXPIRE does.
	setExpiry(sqlstate.NowMS() + (sessionTTL + time.Hour).Milliseconds())
	record("PLAN")
	if got := expiry(); got > sqlstate.NowMS()+sessionTTL.Milliseconds() {
		t.Fatalf("beyond the lifetime: expiry %d, want the full lifetime from now", got)
	}

	// An expired session on the same route starts anew: local_only is not brought back.
	setExpiry(sqlstate.NowMS() - 1)
	record("PLAN")
	if got := load(t, s, "20260101", 4); got.PrevPrimaryRoute != "PLAN" || got.LocalOnly {
		t.Fatalf("after expiry: %+v", got)
	}
}

// Appending after the day's memory has expired starts the day anew; the bound keeps the newest
// turns across appends, whatever their number.
func TestSQLiteAppendTrimsAndRestarts(t *testing.T) {
	h := sqlstatetest.New(t)
	s, ctx := openSQLite(t, h.DB()), context.Background()
	const day = "20260101"
	texts := func(got []domain.Turn) (out []string) {
		for _, t := range got {
			out = append(out, t.Text)
		}
		return out
	}
	for i := range 7 {
		must(t, s.AppendTurns(ctx, sid, day, 3, domain.Turn{Role: "user", Text: fmt.Sprint(i)}, domain.Turn{Role: "assistant", Text: fmt.Sprint(i, "a")}))
	}
	if got := texts(load(t, s, day, 0).Memory); !slices.Equal(got, []string{"5a", "6", "6a"}) {
		t.Fatalf("kept %q", got)
	}
	var rows int
	if err := h.DB().QueryRowContext(ctx, `SELECT count(*) FROM `+tableMemory+` WHERE session = ? AND day = ?`, sid, day).Scan(&rows); err != nil || rows != 3 {
		t.Fatalf("%d rows stored (%v), want 3", rows, err)
	}
	if _, err := h.DB().ExecContext(ctx, `UPDATE `+tableMemory+` SET expires_at = ? WHERE session = ? AND day = ?`, sqlstate.NowMS()-1, sid, day); err != nil {
		t.Fatal(err)
	}
	must(t, s.AppendTurns(ctx, sid, day, 3, domain.Turn{Role: "user", Text: "new"}))
	if got := texts(load(t, s, day, 0).Memory); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("after expiry: %q", got)
	}
	must(t, s.AppendTurns(ctx, sid, day, 0, domain.Turn{Role: "user", Text: "x"}, domain.Turn{Role: "user", Text: "y"}))
	if got := texts(load(t, s, day, 0).Memory); !slices.Equal(got, []string{"new", "x", "y"}) {
		t.Fatalf("unbounded: %q", got)
	}
}

// With a short session lifetime the slack is a tenth of it: a conversation on one route keeps
// its session alive, as on Redis.
func TestSQLiteRouteSlackFollowsAShortLifetime(t *testing.T) {
	if got := routeSlack(24 * time.Hour); got != routeRenewSlack {
		t.Errorf("slack of a day's lifetime %v", got)
	}
	const ttl = 20 * time.Second
	if got := routeSlack(ttl); got != 2*time.Second {
		t.Errorf("slack of a 20 s lifetime %v, want 2 s", got)
	}
	h := sqlstatetest.New(t)
	ctx := context.Background()
	s, err := NewSQLite(ctx, h.DB(), ttl)
	if err != nil {
		t.Fatal(err)
	}
	rec := app.TurnRecord{Day: "20260101", MemoryTurns: 4, Route: "CHAT", Turns: []domain.Turn{{Role: "user", Text: "hi"}}}
	must(t, s.RecordTurn(ctx, sid, rec))
	if _, err := h.DB().ExecContext(ctx, `UPDATE `+tableSessions+` SET expires_at = ? WHERE id = ?`, sqlstate.NowMS()+(ttl-5*time.Second).Milliseconds(), sid); err != nil {
		t.Fatal(err)
	}
	before := sqlstate.NowMS()
	must(t, s.RecordTurn(ctx, sid, rec))
	var exp int64
	if err := h.DB().QueryRowContext(ctx, `SELECT expires_at FROM `+tableSessions+` WHERE id = ?`, sid).Scan(&exp); err != nil {
		t.Fatal(err)
	}
	if exp < before+ttl.Milliseconds() {
		t.Fatalf("a session 5 s into a 20 s lifetime was not renewed: expiry %d, want at least %d", exp, before+ttl.Milliseconds())
	}
}
