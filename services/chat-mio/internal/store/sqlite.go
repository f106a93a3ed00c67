//go:build !serveronly

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// SQLite is the session store on the embedded state engine (pkg/sqlstate), with Redis's
// behaviour table for key:
//
//	chat_sessions  one row per session: local_only, prev_route (the hash)
//	chat_pending   one row per pending job of a session (the set); its rows share one expiry
//	chat_memory    one row per turn of a session's day, in seq order (the list)
//	chat_blobs     deliberation options by job, replies by event and notes by session and day
//	               (the plain keys)
//
// Every row has the expiry of the Redis key it stands for; readers ignore expired rows and a
// write treats them as absent, deleting or overwriting them in the same statement or
// transaction. Each mutation is one transaction, durable when it returns.
type SQLite struct {
	db         *sqlstate.DB
	sessionTTL time.Duration
	// addTurns[k] is addTurnsQuery(k), 1 ≤ k ≤ maxTurnsPerInsert.
	addTurns [maxTurnsPerInsert + 1]string
}

var _ app.SessionStore = (*SQLite)(nil)

// Tables of the store, each registered for the engine's expiry sweeper.
const (
	tableSessions = "chat_sessions"
	tablePending  = "chat_pending"
	tableMemory   = "chat_memory"
	tableBlobs    = "chat_blobs"
)

var sqliteMigrations = []string{
	`CREATE TABLE ` + tableSessions + ` (
		id         TEXT PRIMARY KEY,
		local_only INTEGER NOT NULL DEFAULT 0,
		prev_route TEXT NOT NULL DEFAULT '',
		expires_at INTEGER NOT NULL)`,
	`CREATE TABLE ` + tablePending + ` (
		session    TEXT NOT NULL,
		job_id     TEXT NOT NULL,
		expires_at INTEGER NOT NULL,
		PRIMARY KEY (session, job_id)) WITHOUT ROWID`,
	`CREATE TABLE ` + tableMemory + ` (
		session    TEXT NOT NULL,
		day        TEXT NOT NULL,
		seq        INTEGER NOT NULL,
		turn       TEXT NOT NULL,
		expires_at INTEGER NOT NULL,
		PRIMARY KEY (session, day, seq))`,
	`CREATE TABLE ` + tableBlobs + ` (
		kind       TEXT NOT NULL,
		id         TEXT NOT NULL,
		data       BLOB NOT NULL,
		expires_at INTEGER NOT NULL,
		PRIMARY KEY (kind, id))`,
	// Expiry indexes for the sweeper; not on chat_memory, whose rows all get a new expiry at each
	// append (index upkeep would cost more than the sweeper's scan of a small table).
	`CREATE INDEX chat_sessions_expiry ON ` + tableSessions + ` (expires_at) WHERE expires_at > 0`,
	`CREATE INDEX chat_pending_expiry ON ` + tablePending + ` (expires_at) WHERE expires_at > 0`,
	`CREATE INDEX chat_blobs_expiry ON ` + tableBlobs + ` (expires_at) WHERE expires_at > 0`,
	// The expiry indexes cover every row. With partial ones (WHERE expires_at > 0) the value
	// bound for now decides whether a statement may use them, so SQLite planned every statement
	// comparing expires_at with now again at each call: a third of loading a session.
	`DROP INDEX chat_sessions_expiry;
	DROP INDEX chat_pending_expiry;
	DROP INDEX chat_blobs_expiry;
	CREATE INDEX chat_sessions_expiry ON ` + tableSessions + ` (expires_at);
	CREATE INDEX chat_pending_expiry ON ` + tablePending + ` (expires_at);
	CREATE INDEX chat_blobs_expiry ON ` + tableBlobs + ` (expires_at)`,
}

// live is the condition on a row that has not expired; its argument is sqlstate.NowMS().
const live = `(expires_at = 0 OR expires_at > ?)`

// The same conditions for the statements that number their arguments: live3 is live with now
// as ?3; expired4 is the rows that have expired by ?4.
const (
	live3    = `(expires_at = 0 OR expires_at > ?3)`
	expired4 = `(expires_at > 0 AND expires_at <= ?4)`
)

// qLoad reads a whole session in one statement, hence from one snapshot: one row per part,
// tagged by its first column (0 the session's fields, 1 a pending job, 2 a turn of the day's
// memory with its seq, 3 the day's note, 4 the reply kept for an inbound event). It has no ORDER
// BY, which would sort the turns and the job ids in temporary b-trees: Load orders them itself,
// and they come in order already (the turns newest first, as the index yields the last ones).
// Arguments: session, day, now, how many of the last turns (-1: all), note id, event id ("": no
// reply is read).
const qLoad = `SELECT 0, local_only, prev_route FROM ` + tableSessions + ` WHERE id = ?1 AND ` + live3 + `
	UNION ALL
	SELECT 1, 0, job_id FROM ` + tablePending + ` WHERE session = ?1 AND ` + live3 + `
	UNION ALL
	SELECT 2, seq, turn FROM (SELECT seq, turn FROM ` + tableMemory + ` WHERE session = ?1 AND day = ?2 AND ` + live3 + `
		ORDER BY seq DESC LIMIT ?4)
	UNION ALL
	SELECT 3, 0, data FROM ` + tableBlobs + ` WHERE kind = 'note' AND id = ?5 AND ` + live3 + `
	UNION ALL
	SELECT 4, 0, data FROM ` + tableBlobs + ` WHERE ?6 <> '' AND kind = 'reply' AND id = ?6 AND ` + live3

// The parts of a session as qLoad tags them.
const (
	partSession = iota
	partPending
	partMemory
	partNote
	partReply
)

// The store's statements, prepared when it is built (sqlstate.DB.Prepare).
const (
	qAddPending    = `INSERT INTO ` + tablePending + ` (session, job_id, expires_at) VALUES (?, ?, ?) ON CONFLICT (session, job_id) DO NOTHING`
	qRenewPending  = `UPDATE ` + tablePending + ` SET expires_at = ?1 WHERE session = ?2 AND expires_at <> ?1`
	qRemovePending = `DELETE FROM ` + tablePending + ` WHERE session = ? AND job_id = ?`
	qSaveBlob      = `INSERT INTO ` + tableBlobs + ` (kind, id, data, expires_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (kind, id) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at`
	qBlob = `SELECT data FROM ` + tableBlobs + ` WHERE kind = ? AND id = ? AND ` + live
	// A note is kept once per session and day (SET NX): an expired one counts as absent and is
	// replaced. Arguments: note id, note, expiry, now.
	qAddNote = `INSERT INTO ` + tableBlobs + ` (kind, id, data, expires_at) VALUES ('note', ?1, ?2, ?3)
		ON CONFLICT (kind, id) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at WHERE ` + expired4
	qDelBlob   = `DELETE FROM ` + tableBlobs + ` WHERE kind = ? AND id = ?`
	qActive    = `SELECT DISTINCT session FROM ` + tableMemory + ` WHERE day = ? AND ` + live + ` ORDER BY session`
	qDelMemory = `DELETE FROM ` + tableMemory + ` WHERE session = ? AND day = ?`
)

// A write to an expired set first deletes its rows (the last argument is sqlstate.NowMS()), so
// it starts from nothing, as a write to an expired Redis key does.
const qDropPending = `DELETE FROM ` + tablePending + ` WHERE session = ? AND expires_at > 0 AND expires_at <= ?`

// Setting one field of a session renews the session's expiry; in a session that has expired
// the other field is reset to its default, as HSET on an expired Redis hash starts a new one.
// Arguments: session, value, expiry, now.
const (
	qSetLocalOnly = `INSERT INTO ` + tableSessions + ` (id, local_only, expires_at) VALUES (?1, ?2, ?3)
		ON CONFLICT (id) DO UPDATE SET local_only = excluded.local_only, expires_at = excluded.expires_at,
			prev_route = CASE WHEN ` + expired4 + ` THEN '' ELSE prev_route END`
	qSetPrevRoute = `INSERT INTO ` + tableSessions + ` (id, prev_route, expires_at) VALUES (?1, ?2, ?3)
		ON CONFLICT (id) DO UPDATE SET prev_route = excluded.prev_route, expires_at = excluded.expires_at,
			local_only = CASE WHEN ` + expired4 + ` THEN 0 ELSE local_only END`
)

// Appending turns to a day's memory (appendTurns): qMemoryLast reads the day's newest turn, whose
// seq the new turns follow and whose expiry every row of the day shares; qDropMemoryTo deletes the
// rows up to a seq (those beyond the turns kept), a range of the primary key; addTurnsQuery(k)
// appends k turns; qRenewMemory gives the day's rows the new turns' expiry.
const (
	qMemoryLast   = `SELECT seq, expires_at FROM ` + tableMemory + ` WHERE session = ? AND day = ? ORDER BY seq DESC LIMIT 1`
	qDropMemoryTo = `DELETE FROM ` + tableMemory + ` WHERE session = ?1 AND day = ?2 AND seq <= ?3`
	qRenewMemory  = `UPDATE ` + tableMemory + ` SET expires_at = ?3 WHERE session = ?1 AND day = ?2 AND expires_at <> ?3`
	// maxTurnsPerInsert bounds the turns one prepared INSERT takes; longer appends take several.
	maxTurnsPerInsert = 4
)

// qRecordRoute is qSetPrevRoute as a turn records it: the row is left as it is when the route is
// the same and the session's lifetime has run down by at most ?5 milliseconds (routeSlack),
// so a conversation that stays on one route does not rewrite its session (and the expiry index)
// at every message. Arguments: session, route, expiry, now, slack.
const qRecordRoute = qSetPrevRoute + `
		WHERE prev_route <> excluded.prev_route OR ` + expired4 + ` OR expires_at < excluded.expires_at - ?5
			OR expires_at > excluded.expires_at`

// routeRenewSlack is how far below the session's lifetime a recorded turn may leave it (SQLite;
// Redis renews its key at every write); a tenth of a lifetime shorter than ten times it.
const routeRenewSlack = 30 * time.Second

// routeSlack is routeRenewSlack for a session lifetime of ttl.
func routeSlack(ttl time.Duration) time.Duration { return min(routeRenewSlack, ttl/10) }

// addTurnsQuery inserts k turns (arguments: session, day, expiry, the seq they follow, the k
// turns) in one statement.
func addTurnsQuery(k int) string {
	var values strings.Builder
	for i := range k {
		if i > 0 {
			values.WriteString(", ")
		}
		fmt.Fprintf(&values, "(?1, ?2, ?4 + %d, ?%d, ?3)", i+1, i+5)
	}
	return `INSERT INTO ` + tableMemory + ` (session, day, seq, turn, expires_at) VALUES ` + values.String()
}

func (s *SQLite) statements() []string {
	return append([]string{qLoad, qAddPending, qRenewPending, qRemovePending, qSaveBlob, qBlob, qAddNote, qDelBlob,
		qActive, qDelMemory, qDropPending, qSetLocalOnly, qSetPrevRoute, qRecordRoute, qMemoryLast, qDropMemoryTo, qRenewMemory}, s.addTurns[1:]...)
}

// NewSQLite migrates the store's tables in db and returns the store.
func NewSQLite(ctx context.Context, db *sqlstate.DB, sessionTTL time.Duration) (*SQLite, error) {
	if err := db.Migrate(ctx, "chat-mio", sqliteMigrations...); err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	for _, t := range []string{tableSessions, tablePending, tableMemory, tableBlobs} {
		db.Expire(t)
	}
	s := &SQLite{db: db, sessionTTL: orDefaultTTL(sessionTTL)}
	for k := 1; k <= maxTurnsPerInsert; k++ {
		s.addTurns[k] = addTurnsQuery(k)
	}
	if err := db.Prepare(ctx, s.statements()...); err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	return s, nil
}

// Load implements app.SessionStore: one statement, hence one snapshot of the session.
func (s *SQLite) Load(ctx context.Context, id, day string, memoryTurns int) (domain.Session, error) {
	sess, _, err := s.LoadTurn(ctx, id, day, memoryTurns, "")
	return sess, err
}

// LoadTurn implements app.SessionStore: the session and the event's kept reply in one
// statement, hence one snapshot.
func (s *SQLite) LoadTurn(ctx context.Context, id, day string, memoryTurns int, eventID string) (domain.Session, []byte, error) {
	// The last memoryTurns turns, oldest first; ≤ 0 reads the whole day, as LRANGE 0 -1 does.
	limit := memoryTurns
	if limit <= 0 {
		limit = -1
	}
	st, err := s.stmt(ctx, nil, qLoad)
	if err != nil {
		return domain.Session{}, nil, unavailable("load", err)
	}
	rows, err := st.QueryContext(sqlstate.Detach(ctx), id, day, sqlstate.NowMS(), limit, noteID(id, day), eventID)
	if err != nil {
		return domain.Session{}, nil, unavailable("load", err)
	}
	defer rows.Close()
	sess := domain.Session{ID: id}
	var (
		part, n int64
		v       sql.RawBytes
		seqs    []int64 // of sess.Memory
		reply   []byte
	)
	for rows.Next() {
		if err := rows.Scan(&part, &n, &v); err != nil {
			return domain.Session{}, nil, unavailable("load", err)
		}
		switch part {
		case partSession:
			sess.LocalOnly, sess.PrevPrimaryRoute = n == 1, string(v)
		case partPending:
			sess.Pending = append(sess.Pending, string(v))
		case partMemory:
			t, ok := decodeTurn(v)
			if !ok {
				continue
			}
			if sess.Memory == nil && limit > 0 {
				sess.Memory, seqs = make([]domain.Turn, 0, limit), make([]int64, 0, limit)
			}
			sess.Memory, seqs = append(sess.Memory, t), append(seqs, n)
		case partNote:
			sess.Note = string(v)
		case partReply:
			reply = append([]byte{}, v...)
		}
	}
	if err := rows.Err(); err != nil {
		return domain.Session{}, nil, unavailable("load", err)
	}
	slices.Sort(sess.Pending)
	sort.Sort(turnsBySeq{turns: sess.Memory, seqs: seqs})
	return sess, reply, nil
}

// turnsBySeq orders turns by their seqs, oldest first.
type turnsBySeq struct {
	turns []domain.Turn
	seqs  []int64
}

func (b turnsBySeq) Len() int           { return len(b.turns) }
func (b turnsBySeq) Less(i, j int) bool { return b.seqs[i] < b.seqs[j] }
func (b turnsBySeq) Swap(i, j int) {
	b.turns[i], b.turns[j] = b.turns[j], b.turns[i]
	b.seqs[i], b.seqs[j] = b.seqs[j], b.seqs[i]
}

// noteID is the blob id of a session's note for day.
func noteID(id, day string) string { return day + "|" + id }

// stmt is query as prepared when the store was built, in tx when tx is set.
func (s *SQLite) stmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	st, err := s.db.Stmt(query)
	if err != nil || tx == nil {
		return st, err
	}
	return tx.StmtContext(sqlstate.Detach(ctx), st), nil
}

// exec runs a statement in tx, or as a write transaction of its own when tx is nil.
func (s *SQLite) exec(ctx context.Context, tx *sql.Tx, query string, args ...any) error {
	if tx == nil {
		_, err := s.db.Write(ctx, query, args...)
		return err
	}
	st, err := s.stmt(ctx, tx, query)
	if err == nil {
		_, err = st.ExecContext(sqlstate.Detach(ctx), args...)
	}
	return err
}

// queryRow scans the one row of a query into dest (sql.ErrNoRows when there is none), in tx
// when tx is set.
func (s *SQLite) queryRow(ctx context.Context, tx *sql.Tx, query string, args []any, dest ...any) error {
	st, err := s.stmt(ctx, tx, query)
	if err != nil {
		return err
	}
	return st.QueryRowContext(sqlstate.Detach(ctx), args...).Scan(dest...)
}

// strings runs a query of one text column.
func (s *SQLite) strings(ctx context.Context, query string, args ...any) ([]string, error) {
	st, err := s.stmt(ctx, nil, query)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(sqlstate.Detach(ctx), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// write runs fn in one transaction; op names the mutation in errors.
func (s *SQLite) write(ctx context.Context, op string, fn func(tx *sql.Tx, now int64) error) error {
	if err := s.db.Tx(ctx, func(tx *sql.Tx) error { return fn(tx, sqlstate.NowMS()) }); err != nil {
		return unavailable(op, err)
	}
	return nil
}

// setField sets one field of the session (query: qSet…, op: its name in errors) and renews the
// session's lifetime, in one statement.
func (s *SQLite) setField(ctx context.Context, id, op, query string, value any) error {
	now := sqlstate.NowMS()
	if err := s.exec(ctx, nil, query, id, value, now+s.sessionTTL.Milliseconds(), now); err != nil {
		return unavailable(op, err)
	}
	return nil
}

// SetLocalOnly implements app.SessionStore.
func (s *SQLite) SetLocalOnly(ctx context.Context, id string, on bool) error {
	v := 0
	if on {
		v = 1
	}
	return s.setField(ctx, id, "set local_only", qSetLocalOnly, v)
}

// SetPrevRoute implements app.SessionStore.
func (s *SQLite) SetPrevRoute(ctx context.Context, id, route string) error {
	return s.setField(ctx, id, "set prev_route", qSetPrevRoute, route)
}

// AddPending implements app.SessionStore: the set's lifetime is renewed, as EXPIRE after SADD.
func (s *SQLite) AddPending(ctx context.Context, id, jobID string) error {
	return s.write(ctx, "add pending", func(tx *sql.Tx, now int64) error {
		if err := s.exec(ctx, tx, qDropPending, id, now); err != nil {
			return err
		}
		exp := now + s.sessionTTL.Milliseconds()
		if err := s.exec(ctx, tx, qAddPending, id, jobID, exp); err != nil {
			return err
		}
		return s.exec(ctx, tx, qRenewPending, exp, id)
	})
}

// RemovePending implements app.SessionStore.
func (s *SQLite) RemovePending(ctx context.Context, id, jobID string) error {
	if err := s.exec(ctx, nil, qRemovePending, id, jobID); err != nil {
		return unavailable("remove pending", err)
	}
	return nil
}

// AppendTurns implements app.SessionStore: append, keep the last memoryTurns (all when ≤ 0, as
// LTRIM -0 -1 does) and renew the day's lifetime (see appendTurns).
func (s *SQLite) AppendTurns(ctx context.Context, id, day string, memoryTurns int, turns ...domain.Turn) error {
	return s.RecordTurn(ctx, id, app.TurnRecord{Day: day, MemoryTurns: memoryTurns, Turns: turns})
}

// RecordTurn implements app.SessionStore: one transaction, of at most five statements for a turn
// with its route and reply when it appends at most maxTurnsPerInsert turns (the route, which
// writes only when it changes or the session's lifetime is to be renewed; the memory: the day's
// newest turn, the trim when there are more than it keeps, the append; the reply), one more when
// the day's lifetime is renewed; a reply alone is one statement.
func (s *SQLite) RecordTurn(ctx context.Context, id string, rec app.TurnRecord) error {
	if rec.Empty() {
		return nil
	}
	if len(rec.Turns) == 0 && rec.Route == "" {
		return s.save(ctx, "reply", rec.EventID, rec.Reply, rec.ReplyTTL)
	}
	encoded, err := encodeTurns(rec.Turns)
	if err != nil {
		return err
	}
	// The bound keeps the last MemoryTurns: turns beyond it would be trimmed as soon as written,
	// and of the day's rows only the newest MemoryTurns - len(encoded) stay.
	keep := -1
	if rec.MemoryTurns > 0 {
		if len(encoded) > rec.MemoryTurns {
			encoded = encoded[len(encoded)-rec.MemoryTurns:]
		}
		keep = rec.MemoryTurns - len(encoded)
	}
	return s.write(ctx, "record turn", func(tx *sql.Tx, now int64) error {
		if rec.Route != "" {
			if err := s.exec(ctx, tx, qRecordRoute, id, rec.Route, now+s.sessionTTL.Milliseconds(), now, routeSlack(s.sessionTTL).Milliseconds()); err != nil {
				return err
			}
		}
		if len(encoded) > 0 {
			if err := s.appendTurns(ctx, tx, id, rec.Day, keep, encoded, now); err != nil {
				return err
			}
		}
		if rec.EventID != "" {
			return s.exec(ctx, tx, qSaveBlob, "reply", rec.EventID, rec.Reply, expiresAt(now, rec.ReplyTTL))
		}
		return nil
	})
}

// appendTurns adds the encoded turns to the day's memory in tx: a day that has expired starts
// anew, the rows beyond the newest keep are deleted (none when keep < 0), the turns are appended,
// and the day's lifetime is renewed to memoryTTL from now unless it is within memoryRenewSlack
// of that (so a day's memory may end up to memoryRenewSlack sooner than Redis's, whose EXPIRE
// renews at every append). The rows of a day share one expiry, so the newest row's is the day's.
func (s *SQLite) appendTurns(ctx context.Context, tx *sql.Tx, id, day string, keep int, encoded []string, now int64) error {
	var last, cur int64
	err := s.queryRow(ctx, tx, qMemoryLast, []any{id, day}, &last, &cur)
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	switch {
	case found && cur > 0 && cur <= now:
		if err := s.exec(ctx, tx, qDelMemory, id, day); err != nil {
			return err
		}
		last, found = 0, false
	case found && keep >= 0 && last-int64(keep) >= 1:
		if err := s.exec(ctx, tx, qDropMemoryTo, id, day, last-int64(keep)); err != nil {
			return err
		}
	}
	// The day's rows are renewed to the full lifetime only when theirs has run down by more
	// than memoryRenewSlack: renewing rewrites every row of the day, and a chat that goes on
	// within the slack would pay that at each message for a few seconds of lifetime.
	exp := now + memoryTTL.Milliseconds()
	renew := found
	if found && exp-memoryRenewSlack.Milliseconds() <= cur && cur <= exp {
		exp, renew = cur, false
	}
	for rest := encoded; len(rest) > 0; {
		k := min(len(rest), maxTurnsPerInsert)
		args := make([]any, 0, 4+k)
		args = append(args, id, day, exp, last)
		for _, t := range rest[:k] {
			args = append(args, t)
		}
		if err := s.exec(ctx, tx, s.addTurns[k], args...); err != nil {
			return err
		}
		last += int64(k)
		rest = rest[k:]
	}
	if !renew {
		return nil
	}
	return s.exec(ctx, tx, qRenewMemory, id, day, exp)
}

// memoryRenewSlack is how far below memoryTTL a day's memory may have run down before an append
// renews it (SQLite; Redis renews its key at each append, for the price of one EXPIRE).
const memoryRenewSlack = 30 * time.Second

// ActiveSessions implements app.SessionStore.
func (s *SQLite) ActiveSessions(ctx context.Context, day string) ([]string, error) {
	ids, err := s.strings(ctx, qActive, day, sqlstate.NowMS())
	if err != nil {
		return nil, unavailable("active sessions", err)
	}
	return ids, nil
}

// SaveNote implements app.SessionStore: the first note of a day stays, as SET NX; one statement.
func (s *SQLite) SaveNote(ctx context.Context, id, day, note string) (bool, error) {
	now := sqlstate.NowMS()
	res, err := s.db.Write(ctx, qAddNote, noteID(id, day), []byte(note), now+memoryTTL.Milliseconds(), now)
	if err != nil {
		return false, unavailable("save note", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, unavailable("save note", err)
	}
	return n == 1, nil
}

// Forget implements app.SessionStore: one transaction drops the days' memory and notes.
func (s *SQLite) Forget(ctx context.Context, id string, days ...string) error {
	return s.write(ctx, "forget", func(tx *sql.Tx, _ int64) error {
		for _, d := range days {
			if err := s.exec(ctx, tx, qDelMemory, id, d); err != nil {
				return err
			}
			if err := s.exec(ctx, tx, qDelBlob, "note", noteID(id, d)); err != nil {
				return err
			}
		}
		return nil
	})
}

// SaveOptions implements app.SessionStore.
func (s *SQLite) SaveOptions(ctx context.Context, jobID string, data []byte, ttl time.Duration) error {
	return s.save(ctx, "options", jobID, data, ttl)
}

// LoadOptions implements app.SessionStore.
func (s *SQLite) LoadOptions(ctx context.Context, jobID string) ([]byte, error) {
	return s.load(ctx, "options", jobID, "options of "+jobID)
}

// save replaces the blob kind/id and its lifetime (none when ttl is 0), as SET with a TTL.
func (s *SQLite) save(ctx context.Context, kind, id string, data []byte, ttl time.Duration) error {
	if err := s.exec(ctx, nil, qSaveBlob, kind, id, data, sqlstate.ExpiresAt(ttl)); err != nil {
		return unavailable("save "+kind, err)
	}
	return nil
}

// expiresAt is the expiry (Unix ms) of a value kept for ttl from now; 0, never, when ttl is 0,
// as sqlstate.ExpiresAt.
func expiresAt(now int64, ttl time.Duration) int64 {
	if ttl <= 0 {
		return 0
	}
	return now + ttl.Milliseconds()
}

// load reads the blob kind/id; a missing or expired one is domain.ErrNotFound, described as missing.
func (s *SQLite) load(ctx context.Context, kind, id, missing string) ([]byte, error) {
	var b []byte
	err := s.queryRow(ctx, nil, qBlob, []any{kind, id, sqlstate.NowMS()}, &b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", missing, domain.ErrNotFound)
	}
	if err != nil {
		return nil, unavailable("load "+kind, err)
	}
	return b, nil
}

// Ping checks the database (readiness).
func (s *SQLite) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }
