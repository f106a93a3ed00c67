//go:build !serveronly

package inbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
)

// SQLiteEngine keeps the queue in the embedded state database, with the model of a Redis
// stream: per stream a counter of appends (inbox_streams), the entries (inbox_entries), the
// consumer groups with the last entry they were handed (inbox_groups), the delivered and not
// yet acknowledged entries per consumer (inbox_pending), the dedupe ids (inbox_seen) and the
// dead letters with why they died and whether they were replayed (inbox_dead); the sent marks live in inbox_marks. Every change is one
// transaction, durable when it returns. An entry is deleted as soon as every group
// acknowledged it, so the tables hold the traffic in flight, not its history; dedupe ids and
// marks expire through the sqlstate sweeper. It migrates its tables on db.
func SQLiteEngine(ctx context.Context, db *sqlstate.DB) (Engine, error) {
	if err := db.Migrate(ctx, "inbox", sqliteSchema, sqliteDeadWhy); err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	if err := migrateOrder(ctx, db); err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	db.Expire("inbox_seen")
	db.Expire("inbox_marks")
	st, err := prepare(ctx, db)
	if err != nil {
		return nil, err
	}
	return sqliteEngine{db: db, st: st}, nil
}

const sqliteSchema = `
CREATE TABLE inbox_streams (
	stream   TEXT PRIMARY KEY,
	last_ms  INTEGER NOT NULL DEFAULT 0,
	last_seq INTEGER NOT NULL DEFAULT 0,
	dead_seq INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE inbox_entries (
	stream    TEXT NOT NULL,
	seq       INTEGER NOT NULL,
	ms        INTEGER NOT NULL,
	event_id  TEXT NOT NULL,
	event_key TEXT NOT NULL,
	payload   BLOB,
	meta      TEXT NOT NULL,
	mac       TEXT NOT NULL,
	PRIMARY KEY (stream, seq)
);
CREATE TABLE inbox_groups (
	stream   TEXT NOT NULL,
	grp      TEXT NOT NULL,
	last_seq INTEGER NOT NULL,
	PRIMARY KEY (stream, grp)
) WITHOUT ROWID;
CREATE TABLE inbox_pending (
	stream       TEXT NOT NULL,
	grp          TEXT NOT NULL,
	seq          INTEGER NOT NULL,
	consumer     TEXT NOT NULL,
	delivered_ms INTEGER NOT NULL,
	deliveries   INTEGER NOT NULL,
	PRIMARY KEY (stream, grp, seq)
) WITHOUT ROWID;
CREATE INDEX inbox_pending_consumer ON inbox_pending (stream, grp, consumer, seq);
CREATE TABLE inbox_seen (
	stream     TEXT NOT NULL,
	event_id   TEXT NOT NULL,
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (stream, event_id)
) WITHOUT ROWID;
CREATE INDEX inbox_seen_expiry ON inbox_seen (expires_at);
CREATE TABLE inbox_dead (
	stream    TEXT NOT NULL,
	seq       INTEGER NOT NULL,
	ms        INTEGER NOT NULL,
	event_id  TEXT NOT NULL,
	event_key TEXT NOT NULL,
	payload   BLOB,
	meta      TEXT NOT NULL,
	entry     TEXT NOT NULL,
	error     TEXT NOT NULL,
	PRIMARY KEY (stream, seq)
);
CREATE TABLE inbox_marks (
	mark       TEXT PRIMARY KEY,
	expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX inbox_marks_expiry ON inbox_marks (expires_at);
`

// sqliteDeadWhy records why each dead letter died, its seal (a replay puts back only sealed
// events) and whether it was replayed.
const sqliteDeadWhy = `
ALTER TABLE inbox_dead ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE inbox_dead ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE inbox_dead ADD COLUMN mac TEXT NOT NULL DEFAULT '';
ALTER TABLE inbox_dead ADD COLUMN replayed_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE inbox_dead ADD COLUMN replayed_entry TEXT NOT NULL DEFAULT '';
`

// A waiting read is woken at once by an append in this process (Notify). For one by another
// process writing the same file it checks every sqlitePoll whether the file changed
// (sqlstate.DB.Mark, two stat calls) and looks at the tables when it did; also at every check
// while the file changed less than sqliteRecent before the last look (a commit's log is written
// before the commit is visible, and a file's time has a granularity), and at least every
// sqliteRelook. So an idle consumer looks once per Block (or per sqliteRelook, when Block is
// longer), not once per sqlitePoll, and sees another process's append within about sqlitePoll.
const (
	sqlitePoll   = 500 * time.Millisecond
	sqliteRecent = 2 * time.Second
	sqliteRelook = 30 * time.Second
)

// The statements, prepared once per engine (see prepare).
const (
	sqlHead    = `SELECT last_ms, last_seq FROM inbox_streams WHERE stream = ?`
	sqlAddHead = `INSERT INTO inbox_streams (stream) VALUES (?) ON CONFLICT (stream) DO NOTHING`
	sqlSetHead = `UPDATE inbox_streams SET last_ms = ?, last_seq = ? WHERE stream = ?`
	// An id is remembered unless it is remembered already and has not expired.
	sqlSeen = `INSERT INTO inbox_seen (stream, event_id, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (stream, event_id) DO UPDATE SET expires_at = excluded.expires_at
		WHERE inbox_seen.expires_at > 0 AND inbox_seen.expires_at <= ?`
	sqlInsertEntry = `INSERT INTO inbox_entries (stream, seq, ms, event_id, event_key, payload, meta, mac)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	sqlTrimEntries = `DELETE FROM inbox_entries WHERE stream = ? AND seq <= ?`
	sqlTrimPending = `DELETE FROM inbox_pending WHERE stream = ? AND seq <= ?`
	sqlPing        = `SELECT EXISTS (SELECT 1 FROM inbox_streams)`
	sqlDeadCount   = `SELECT count(*) FROM inbox_dead WHERE stream = ?`
	// One statement, so the numbers are of one moment.
	sqlStats = `SELECT g.last_seq,
		(SELECT count(*) FROM inbox_entries WHERE stream = ?1),
		(SELECT count(*) FROM inbox_entries WHERE stream = ?1 AND seq > coalesce(g.last_seq, 0)),
		(SELECT count(*) FROM inbox_pending WHERE stream = ?1 AND grp = ?2)
		FROM (SELECT 1) LEFT JOIN inbox_groups g ON g.stream = ?1 AND g.grp = ?2`
	// The group starts before the first entry: entries appended before it existed are processed too.
	sqlAddGroup = `INSERT INTO inbox_groups (stream, grp, last_seq) VALUES (?, ?, 0)
		ON CONFLICT (stream, grp) DO NOTHING`
	sqlWaiting = `SELECT EXISTS (SELECT 1 FROM inbox_entries e WHERE e.stream = g.stream AND e.seq > g.last_seq)
		FROM inbox_groups g WHERE g.stream = ? AND g.grp = ?`
	sqlGroupLast = `SELECT last_seq FROM inbox_groups WHERE stream = ? AND grp = ?`
	// The group's next entries, each with whether an earlier entry of its key is pending in the
	// group (the order half of its turn, order.go), read before they are delivered. Arguments:
	// stream, group, last delivered seq, count.
	sqlNewEntries = `SELECT e.seq, e.ms, e.event_id, e.event_key, e.payload, e.meta, e.mac,
		EXISTS (SELECT 1 FROM inbox_entries o JOIN inbox_pending p ON p.stream = o.stream AND p.grp = ?2 AND p.seq = o.seq
			WHERE o.stream = e.stream AND o.event_key = e.event_key AND o.seq < e.seq)
		FROM inbox_entries e WHERE e.stream = ?1 AND e.seq > ?3 ORDER BY e.seq LIMIT ?4`
	sqlDeliver = `INSERT INTO inbox_pending (stream, grp, seq, consumer, delivered_ms, deliveries)
		VALUES (?, ?, ?, ?, ?, 1)`
	sqlSetGroupLast = `UPDATE inbox_groups SET last_seq = ? WHERE stream = ? AND grp = ?`
	sqlOwnPending   = `SELECT e.seq, e.ms, e.event_id, e.event_key, e.payload, e.meta, e.mac
		FROM inbox_pending p JOIN inbox_entries e ON e.stream = p.stream AND e.seq = p.seq
		WHERE p.stream = ? AND p.grp = ? AND p.consumer = ? AND p.seq > ? ORDER BY p.seq LIMIT ?`
	sqlIdlePending = `SELECT e.seq, e.ms, e.event_id, e.event_key, e.payload, e.meta, e.mac
		FROM inbox_pending p JOIN inbox_entries e ON e.stream = p.stream AND e.seq = p.seq
		WHERE p.stream = ? AND p.grp = ? AND p.seq >= ? AND p.delivered_ms <= ? ORDER BY p.seq LIMIT ?`
	sqlClaim = `UPDATE inbox_pending SET consumer = ?, delivered_ms = ?, deliveries = deliveries + ?
		WHERE stream = ? AND grp = ? AND seq = ?`
	// A keep-alive refreshes only what is still the consumer's: it never takes an entry back.
	sqlTouch = `UPDATE inbox_pending SET delivered_ms = ? WHERE stream = ? AND grp = ? AND seq = ? AND consumer = ?`
	sqlAck   = `DELETE FROM inbox_pending WHERE stream = ? AND grp = ? AND seq = ?`
	// An entry goes once no group needs it: every group was handed it and none has it pending.
	sqlDropEntry = `DELETE FROM inbox_entries WHERE stream = ?1 AND seq = ?2
		AND NOT EXISTS (SELECT 1 FROM inbox_groups WHERE stream = ?1 AND last_seq < ?2)
		AND NOT EXISTS (SELECT 1 FROM inbox_pending WHERE stream = ?1 AND seq = ?2)`
	sqlNextDead = `INSERT INTO inbox_streams (stream, dead_seq) VALUES (?, 1)
		ON CONFLICT (stream) DO UPDATE SET dead_seq = dead_seq + 1 RETURNING dead_seq`
	sqlInsertDead = `INSERT INTO inbox_dead (stream, seq, ms, event_id, event_key, payload, meta, entry, error, kind, attempts, mac)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlDeadColumns = `SELECT seq, ms, event_id, event_key, payload, meta, entry, error, kind, attempts, mac, replayed_ms, replayed_entry
		FROM inbox_dead`
	sqlListDead = sqlDeadColumns + ` WHERE stream = ? AND seq < ? ORDER BY seq DESC LIMIT ?`
	sqlGetDead  = sqlDeadColumns + ` WHERE stream = ? AND seq = ?`
	sqlReplayed = `UPDATE inbox_dead SET replayed_ms = ?, replayed_entry = ? WHERE stream = ? AND seq = ?`
	sqlDropDead = `DELETE FROM inbox_dead WHERE stream = ? AND seq = ?`
	sqlTrimDead = `DELETE FROM inbox_dead WHERE stream = ? AND seq <= ?`
	sqlMarkDone = `SELECT EXISTS (SELECT 1 FROM inbox_marks WHERE mark = ? AND (expires_at = 0 OR expires_at > ?))`
	sqlSetMark  = `INSERT INTO inbox_marks (mark, expires_at) VALUES (?, ?) ON CONFLICT (mark) DO UPDATE SET expires_at = excluded.expires_at`
)

var sqliteStatements = []string{sqlHead, sqlAddHead, sqlSetHead, sqlSeen, sqlInsertEntry, sqlTrimEntries, sqlTrimPending, sqlPing,
	sqlDeadCount, sqlStats, sqlAddGroup, sqlWaiting, sqlGroupLast, sqlNewEntries, sqlDeliver, sqlSetGroupLast, sqlOwnPending,
	sqlIdlePending, sqlClaim, sqlAck, sqlDropEntry, sqlNextDead, sqlInsertDead, sqlTrimDead, sqlMarkDone, sqlSetMark,
	sqlListDead, sqlGetDead, sqlReplayed, sqlDropDead, sqlTurn, sqlTouch, sqlOutstanding}

// statements are the prepared statements: SQLite parses each once per connection instead of
// at every call, a third of an append's time. They are prepared up front, outside any
// transaction: preparing in the middle of one would wait for the connection the transaction holds.
type statements map[string]*sql.Stmt

func prepare(ctx context.Context, db *sqlstate.DB) (statements, error) {
	st := statements{}
	for _, q := range sqliteStatements {
		s, err := db.PrepareContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("inbox: prepare %q: %w", q, err)
		}
		st[q] = s
	}
	return st, nil
}

// in is the statement query within tx (on the database when tx is nil).
func (st statements) in(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	if tx == nil {
		return st[query]
	}
	return tx.StmtContext(sqlstate.Detach(ctx), st[query])
}

type sqliteEngine struct {
	db *sqlstate.DB
	st statements
}

func (e sqliteEngine) queue(cfg Config) queue {
	return &sqliteQueue{db: e.db, st: e.st, cfg: cfg, topic: "inbox:" + cfg.Stream}
}

func (e sqliteEngine) marks(prefix string, ttl time.Duration) marker {
	return sqliteMarks{db: e.db, st: e.st, prefix: prefix, ttl: ttl}
}

type sqliteQueue struct {
	db    *sqlstate.DB
	st    statements
	cfg   Config
	topic string
	// found: the consumer's last look for new entries found some (deliverNew).
	found atomic.Bool
}

func (q *sqliteQueue) exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	return q.st.in(ctx, tx, query).ExecContext(sqlstate.Detach(ctx), args...)
}

func (q *sqliteQueue) row(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	return q.st.in(ctx, tx, query).QueryRowContext(sqlstate.Detach(ctx), args...)
}

// head creates the stream's row when missing and returns its counters (a read, and a write only
// the first time).
func (q *sqliteQueue) head(ctx context.Context, tx *sql.Tx) (lastMS, lastSeq int64, err error) {
	err = q.row(ctx, tx, sqlHead, q.cfg.Stream).Scan(&lastMS, &lastSeq)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = q.exec(ctx, tx, sqlAddHead, q.cfg.Stream)
	}
	return lastMS, lastSeq, err
}

func (q *sqliteQueue) append(ctx context.Context, entries []entry) []appended {
	var res []appended
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = q.appendTx(ctx, tx, entries, true)
		return err
	})
	if err != nil {
		return failAll(len(entries), err)
	}
	q.notifyAppended(res)
	return res
}

// appendTx stores entries within tx; with dedupe, only those whose event id is not remembered
// (and it is remembered then).
func (q *sqliteQueue) appendTx(ctx context.Context, tx *sql.Tx, entries []entry, dedupe bool) ([]appended, error) {
	res := make([]appended, len(entries))
	now := sqlstate.NowMS()
	lastMS, lastSeq, err := q.head(ctx, tx)
	if err != nil {
		return nil, err
	}
	stored := false
	for i, e := range entries {
		if dedupe {
			fresh, err := q.markSeenTx(ctx, tx, e.eventID, now)
			if err != nil {
				return nil, err
			}
			if !fresh {
				continue // a duplicate
			}
		}
		// Ids grow even when the clock steps back, as Redis stream ids do.
		lastMS, lastSeq = max(lastMS, now), lastSeq+1
		if _, err := q.exec(ctx, tx, sqlInsertEntry, q.cfg.Stream, lastSeq, lastMS, e.eventID, e.key, e.payload, e.meta, e.mac); err != nil {
			return nil, err
		}
		res[i].id = streamID(lastMS, lastSeq)
		stored = true
	}
	if !stored {
		return res, nil
	}
	if _, err := q.exec(ctx, tx, sqlSetHead, lastMS, lastSeq, q.cfg.Stream); err != nil {
		return nil, err
	}
	return res, q.trim(ctx, tx, lastSeq-q.cfg.MaxLen)
}

// markSeenTx remembers the event id for DedupeTTL from now; false when it was remembered already.
func (q *sqliteQueue) markSeenTx(ctx context.Context, tx *sql.Tx, id string, now int64) (bool, error) {
	r, err := q.exec(ctx, tx, sqlSeen, q.cfg.Stream, id, now+max(q.cfg.DedupeTTL.Milliseconds(), 1), now)
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n > 0, err
}

// notifyAppended wakes this process's waiting readers when res stored anything.
func (q *sqliteQueue) notifyAppended(res []appended) {
	for _, r := range res {
		if r.id != "" {
			q.db.Notify(q.topic)
			return
		}
	}
}

// trim drops the entries (and their deliveries) appended before the last MaxLen, as Redis
// MAXLEN does: they were not processed in time and are given up.
func (q *sqliteQueue) trim(ctx context.Context, tx *sql.Tx, upTo int64) error {
	if upTo <= 0 {
		return nil
	}
	if _, err := q.exec(ctx, tx, sqlTrimEntries, q.cfg.Stream, upTo); err != nil {
		return err
	}
	_, err := q.exec(ctx, tx, sqlTrimPending, q.cfg.Stream, upTo)
	return err
}

func (q *sqliteQueue) ping(ctx context.Context) error {
	var some bool
	return q.row(ctx, nil, sqlPing).Scan(&some)
}

func (q *sqliteQueue) dead(ctx context.Context) (int64, error) {
	var n int64
	err := q.row(ctx, nil, sqlDeadCount, q.cfg.Stream).Scan(&n)
	return n, err
}

func (q *sqliteQueue) stats(ctx context.Context) (Stats, error) {
	var last sql.NullInt64
	var st Stats
	if err := q.row(ctx, nil, sqlStats, q.cfg.Stream, q.cfg.Group).Scan(&last, &st.Length, &st.Lag, &st.Pending); err != nil {
		return Stats{}, err
	}
	if !last.Valid {
		return Stats{Length: st.Length}, nil
	}
	st.Group = true
	return st, nil
}

func (q *sqliteQueue) ensureGroup(ctx context.Context) error {
	return q.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, _, err := q.head(ctx, tx); err != nil {
			return err
		}
		_, err := q.exec(ctx, tx, sqlAddGroup, q.cfg.Stream, q.cfg.Group)
		return err
	})
}

// readNew looks for new entries and, finding none, waits for an append (see sqlitePoll) and
// looks again, until block has passed; then it returns none without a last look, as the
// caller's next read looks first.
func (q *sqliteQueue) readNew(ctx context.Context, consumer string, count int64, block time.Duration) ([]entry, error) {
	deadline := time.Now().Add(block)
	for {
		// Taken before looking, so an append between the look and the wait is not missed, by
		// this process (wake) or by another (mark).
		wake, mark, looked := q.db.Wait(q.topic), q.db.Mark(), time.Now()
		es, err := q.deliverNew(ctx, consumer, count)
		if err != nil || len(es) > 0 {
			return es, err
		}
		for {
			left := time.Until(deadline)
			if left <= 0 {
				return nil, nil
			}
			if !sleepUntil(ctx, min(left, sqlitePoll), wake) {
				return nil, ctx.Err()
			}
			woke := false
			select {
			case <-wake:
				woke = true
			default:
			}
			if woke || q.db.Mark() != mark || looked.Sub(mark.Changed()) < sqliteRecent || time.Since(looked) >= sqliteRelook {
				break
			}
		}
	}
}

// deliverNew hands the group's next entries to consumer. It first reads whether there are any,
// so that an idle consumer's look takes no write transaction; right after a look that found
// some (a burst), it goes straight to the write transaction, which more likely finds more.
func (q *sqliteQueue) deliverNew(ctx context.Context, consumer string, count int64) (out []entry, err error) {
	if !q.found.Load() {
		var waiting bool
		err := q.row(ctx, nil, sqlWaiting, q.cfg.Stream, q.cfg.Group).Scan(&waiting)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, errNoGroup
		}
		if err != nil || !waiting {
			return nil, err
		}
	}
	defer func() { q.found.Store(err == nil && len(out) > 0) }()
	err = q.db.Tx(ctx, func(tx *sql.Tx) error {
		out = nil
		var last int64
		err := q.row(ctx, tx, sqlGroupLast, q.cfg.Stream, q.cfg.Group).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) {
			return errNoGroup
		}
		if err != nil {
			return err
		}
		es, seqs, err := q.newEntries(ctx, tx, last, count)
		if err != nil || len(es) == 0 {
			return err
		}
		now := sqlstate.NowMS()
		for _, seq := range seqs {
			if _, err := q.exec(ctx, tx, sqlDeliver, q.cfg.Stream, q.cfg.Group, seq, consumer, now); err != nil {
				return err
			}
		}
		if _, err := q.exec(ctx, tx, sqlSetGroupLast, seqs[len(seqs)-1], q.cfg.Stream, q.cfg.Group); err != nil {
			return err
		}
		out = es
		return nil
	})
	return out, err
}

func (q *sqliteQueue) readOwn(ctx context.Context, consumer, after string, count int64) ([]entry, error) {
	return q.takePending(ctx, consumer, sqlOwnPending, consumer, seqOf(after), count)
}

func (q *sqliteQueue) claimIdle(ctx context.Context, consumer string, minIdle time.Duration, start string, count int64) ([]entry, string, error) {
	es, err := q.takePending(ctx, consumer, sqlIdlePending, seqOf(start), sqlstate.NowMS()-minIdle.Milliseconds(), count)
	if err != nil || int64(len(es)) < count {
		return es, "", err
	}
	return es, streamID(0, seqOf(es[len(es)-1].id)+1), nil
}

// takePending delivers the pending entries query selects (its arguments after the stream and
// group) to consumer again, as XREADGROUP from history and XAUTOCLAIM do.
func (q *sqliteQueue) takePending(ctx context.Context, consumer, query string, args ...any) ([]entry, error) {
	var out []entry
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		es, seqs, err := q.entries(ctx, tx, query, append([]any{q.cfg.Stream, q.cfg.Group}, args...)...)
		if err != nil {
			return err
		}
		out = es
		return q.claim(ctx, tx, consumer, seqs, 1)
	})
	return out, err
}

// claim gives the pending entries seqs to consumer, fresh, counting count more deliveries.
func (q *sqliteQueue) claim(ctx context.Context, tx *sql.Tx, consumer string, seqs []int64, count int) error {
	now := sqlstate.NowMS()
	for _, seq := range seqs {
		if _, err := q.exec(ctx, tx, sqlClaim, consumer, now, count, q.cfg.Stream, q.cfg.Group, seq); err != nil {
			return err
		}
	}
	return nil
}

func (q *sqliteQueue) touch(ctx context.Context, consumer string, ids []string) error {
	now := sqlstate.NowMS()
	return q.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := q.exec(ctx, tx, sqlTouch, now, q.cfg.Stream, q.cfg.Group, seqOf(id), consumer); err != nil {
				return err
			}
		}
		return nil
	})
}

// ack is one transaction; the order needs nothing of its own (sqlite_order.go). The next
// entry's turn is read in it, after the ack, on the transaction's connection.
func (q *sqliteQueue) ack(ctx context.Context, consumer, key, id, next string) (turn, error) {
	t := turnUnknown
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		t = turnUnknown
		if err := q.ackTx(ctx, tx, id); err != nil {
			return err
		}
		if next != "" && key != "" {
			if nt, err := q.turnIn(ctx, tx, consumer, key, next); err == nil {
				t = nt
			}
		}
		return nil
	})
	if err != nil {
		return turnUnknown, err
	}
	return t, nil
}

// ackTx ends the entry's delivery to the group and deletes the entry once no group needs it.
func (q *sqliteQueue) ackTx(ctx context.Context, tx *sql.Tx, id string) error {
	seq := seqOf(id)
	if _, err := q.exec(ctx, tx, sqlAck, q.cfg.Stream, q.cfg.Group, seq); err != nil {
		return err
	}
	_, err := q.exec(ctx, tx, sqlDropEntry, q.cfg.Stream, seq)
	return err
}

func (q *sqliteQueue) bury(ctx context.Context, d Delivery, meta []byte, w deadWhy) error {
	return q.db.Tx(ctx, func(tx *sql.Tx) error {
		e := entry{eventID: d.ID, key: d.Key, payload: d.Payload, meta: string(meta), mac: d.mac}
		if err := q.addDeadTx(ctx, tx, e, d.StreamID, w, sqlstate.NowMS()); err != nil {
			return err
		}
		return q.ackTx(ctx, tx, d.StreamID)
	})
}

// addDeadTx adds e (the stream entry streamEntry, "" when it never was one) to the dead letters,
// which keep the newest MaxLen.
func (q *sqliteQueue) addDeadTx(ctx context.Context, tx *sql.Tx, e entry, streamEntry string, w deadWhy, now int64) error {
	var n int64
	if err := q.row(ctx, tx, sqlNextDead, q.cfg.Stream).Scan(&n); err != nil {
		return err
	}
	if _, err := q.exec(ctx, tx, sqlInsertDead, q.cfg.Stream, n, now, e.eventID, e.key, e.payload, e.meta, streamEntry,
		w.reason, w.kind, w.attempts, e.mac); err != nil {
		return err
	}
	if cut := n - q.cfg.MaxLen; cut > 0 {
		if _, err := q.exec(ctx, tx, sqlTrimDead, q.cfg.Stream, cut); err != nil {
			return err
		}
	}
	return nil
}

func (q *sqliteQueue) deadList(ctx context.Context, before string, count int64) ([]DeadLetter, error) {
	upTo := int64(math.MaxInt64)
	if before != "" {
		upTo = seqOf(before)
	}
	rows, err := q.st[sqlListDead].QueryContext(ctx, q.cfg.Stream, upTo, count)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []DeadLetter
	for rows.Next() {
		dl, err := scanDead(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, dl)
	}
	return out, rows.Err()
}

func (q *sqliteQueue) deadGet(ctx context.Context, id string) (DeadLetter, bool, error) {
	return q.deadGetTx(ctx, nil, id)
}

func (q *sqliteQueue) deadGetTx(ctx context.Context, tx *sql.Tx, id string) (DeadLetter, bool, error) {
	dl, err := scanDead(q.row(ctx, tx, sqlGetDead, q.cfg.Stream, seqOf(id)))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && dl.ID != id) {
		return DeadLetter{}, false, nil
	}
	return dl, err == nil, err
}

func (q *sqliteQueue) deadReplay(ctx context.Context, id string, e entry) (Replay, bool, error) {
	var r Replay
	found := false
	var res []appended
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		dl, ok, err := q.deadGetTx(ctx, tx, id)
		if err != nil || !ok {
			return err
		}
		found = true
		if dl.Replayed != nil {
			r = *dl.Replayed
			r.Already = true
			return nil
		}
		// Not deduplicated: the event id is still remembered from its first arrival.
		if res, err = q.appendTx(ctx, tx, []entry{e}, false); err != nil {
			return err
		}
		r = Replay{Entry: res[0].id, At: time.UnixMilli(sqlstate.NowMS())}
		_, err = q.exec(ctx, tx, sqlReplayed, r.At.UnixMilli(), r.Entry, q.cfg.Stream, seqOf(id))
		return err
	})
	if err != nil {
		return Replay{}, false, err
	}
	q.notifyAppended(res)
	return r, found, nil
}

func (q *sqliteQueue) deadDrop(ctx context.Context, id string) (bool, error) {
	found := false
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		_, ok, err := q.deadGetTx(ctx, tx, id)
		if err != nil || !ok {
			return err
		}
		found = true
		_, err = q.exec(ctx, tx, sqlDropDead, q.cfg.Stream, seqOf(id))
		return err
	})
	return found, err
}

// scanDead reads one row of sqlDeadColumns.
func scanDead(row interface{ Scan(...any) error }) (DeadLetter, error) {
	var dl DeadLetter
	var seq, ms, replayedMS int64
	var replayedEntry string
	if err := row.Scan(&seq, &ms, &dl.EventID, &dl.Key, &dl.Payload, &dl.rawMeta, &dl.Entry, &dl.Reason, &dl.Kind, &dl.Attempts,
		&dl.mac, &replayedMS, &replayedEntry); err != nil {
		return DeadLetter{}, err
	}
	dl.ID = streamID(ms, seq)
	if replayedMS > 0 {
		dl.Replayed = &Replay{Entry: replayedEntry, At: time.UnixMilli(replayedMS)}
	}
	dl.finish()
	return dl, nil
}

// entries reads entries (seq, ms, event_id, event_key, payload, meta, mac) and their seqs.
func (q *sqliteQueue) entries(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]entry, []int64, error) {
	return q.scanEntries(ctx, tx, query, false, args...)
}

// newEntries reads the group's next entries after the seq last, before they are delivered
// (deliverNew). An entry that no earlier entry of its key, pending in the group or before it in
// these, goes before is marked goAtDelivery: once delivered to a consumer in the same
// transaction, its turn is go.
func (q *sqliteQueue) newEntries(ctx context.Context, tx *sql.Tx, last, count int64) ([]entry, []int64, error) {
	return q.scanEntries(ctx, tx, sqlNewEntries, true, q.cfg.Stream, q.cfg.Group, last, count)
}

// scanEntries runs query and reads its entries; withEarlier: each row ends with whether an
// earlier entry of its key is pending (newEntries).
func (q *sqliteQueue) scanEntries(ctx context.Context, tx *sql.Tx, query string, withEarlier bool, args ...any) ([]entry, []int64, error) {
	rows, err := q.st.in(ctx, tx, query).QueryContext(sqlstate.Detach(ctx), args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var es []entry
	var seqs []int64
	for rows.Next() {
		var e entry
		var seq, ms int64
		var earlier bool
		dest := []any{&seq, &ms, &e.eventID, &e.key, &e.payload, &e.meta, &e.mac, &earlier}
		if !withEarlier {
			dest = dest[:len(dest)-1]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, err
		}
		e.id = streamID(ms, seq)
		e.goAtDelivery = withEarlier && !earlier && !slices.ContainsFunc(es, func(o entry) bool { return o.key == e.key })
		es = append(es, e)
		seqs = append(seqs, seq)
	}
	return es, seqs, rows.Err()
}

// seqOf is the append number in an entry id ("<ms>-<seq>"; 0 for "0" or "").
func seqOf(id string) int64 {
	_, seq := splitID(id)
	return int64(seq)
}

type sqliteMarks struct {
	db     *sqlstate.DB
	st     statements
	prefix string
	ttl    time.Duration
}

func (m sqliteMarks) done(ctx context.Context, key string) (bool, error) {
	var ok bool
	err := m.st[sqlMarkDone].QueryRowContext(sqlstate.Detach(ctx), m.prefix+key, sqlstate.NowMS()).Scan(&ok)
	return ok, err
}

func (m sqliteMarks) mark(ctx context.Context, key string) error {
	return m.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := m.st.in(ctx, tx, sqlSetMark).ExecContext(sqlstate.Detach(ctx), m.prefix+key, sqlstate.ExpiresAt(m.ttl))
		return err
	})
}
