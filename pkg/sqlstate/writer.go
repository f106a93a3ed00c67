package sqlstate

import (
	"context"
	"database/sql"
	"errors"
	"runtime"
	"slices"
	"sync"
	"time"
)

// maxBatch bounds how many calls share one transaction, so a long queue cannot make one
// transaction (and the write lock it holds) arbitrarily long.
const maxBatch = 64

// A batch of fewer than batchGather calls yields the processor up to batchYields times before
// it starts (see runNext).
const (
	batchGather = 4
	batchYields = 2
)

// writer is the queue of write transactions of one DB (see DB.Tx). The caller at the head of
// the queue leads: it runs the queued calls as one batch and hands the lead to the next
// waiting caller, so no goroutine is needed between calls and no caller waits behind batches
// that came after its own.
type writer struct {
	mu      sync.Mutex
	queue   []*txCall
	running bool // a leader is running a batch or about to
}

type txCall struct {
	ctx  context.Context
	fn   func(tx *sql.Tx) error
	done chan error    // the call's result
	lead chan struct{} // this caller is to run the next batch
	// panicked is what fn panicked with (set before done is sent).
	panicked any
}

func (w *writer) do(ctx context.Context, db *sql.DB, busy time.Duration, fn func(tx *sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c := &txCall{ctx: ctx, fn: fn, done: make(chan error, 1), lead: make(chan struct{}, 1)}
	w.mu.Lock()
	w.queue = append(w.queue, c)
	if !w.running {
		w.running = true
		c.lead <- struct{}{}
	}
	w.mu.Unlock()
	// A call is not given up when its context ends: it may be in the batch that is running, and
	// its caller must learn whether it was committed. A call still queued after busy (a batch
	// that does not end, or a Tx called from inside another's fn, which would wait for itself)
	// leaves the queue and fails as SQLite's own lock wait does.
	timeout := time.NewTimer(busy)
	defer timeout.Stop()
	for {
		select {
		case err := <-c.done:
			if c.panicked != nil {
				panic(c.panicked)
			}
			return err
		case <-c.lead:
			w.runNext(db)
		case <-timeout.C:
			if w.leave(c) {
				return ErrBusy
			}
		}
	}
}

// ErrBusy is the error of a write transaction that waited longer than the busy timeout for its
// turn.
var ErrBusy = errors.New("state database: busy: a write transaction waited too long for its turn")

// leave takes c out of the queue unless a batch took it already; a lead handed to c and not
// taken up goes to the next queued call.
func (w *writer) leave(c *txCall) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := slices.Index(w.queue, c)
	if i < 0 {
		return false
	}
	w.queue = slices.Delete(w.queue, i, i+1)
	select {
	case <-c.lead:
		w.passLead()
	default:
	}
	return true
}

// passLead hands the lead to the first queued call, or ends the run when none waits. w.mu is held.
func (w *writer) passLead() {
	if len(w.queue) > 0 {
		w.queue[0].lead <- struct{}{}
		return
	}
	w.running = false
	w.queue = nil
}

// runNext runs the queued calls (the leader's among them) as one batch and passes the lead on.
func (w *writer) runNext(db *sql.DB) {
	w.mu.Lock()
	// A small batch first lets the goroutines that are ready to run do so (twice at most): a
	// write one of them is about to queue then joins the batch and shares its commit.
	for i := 0; i < batchYields && len(w.queue) < batchGather; i++ {
		w.mu.Unlock()
		runtime.Gosched()
		w.mu.Lock()
	}
	n := min(len(w.queue), maxBatch)
	batch := w.queue[:n:n]
	w.queue = w.queue[n:]
	w.mu.Unlock()

	defer func() {
		w.mu.Lock()
		w.passLead()
		w.mu.Unlock()
	}()
	runBatch(db, batch)
}

// runBatch runs the calls in one transaction, each in a savepoint, and commits it. A call whose
// context has ended is not run. When the transaction cannot go on (an error SQLite answers by
// rolling the whole transaction back) or cannot be committed, the calls that had succeeded in
// it and those not reached yet are run again, each in its own transaction.
func runBatch(db *sql.DB, batch []*txCall) {
	if len(batch) == 1 {
		batch[0].done <- runAlone(db, batch[0])
		return
	}
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		for _, c := range batch {
			c.done <- err
		}
		return
	}
	var ok []*txCall
	for i, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.done <- err
			continue
		}
		if _, err := tx.Exec(`SAVEPOINT sqlstate_call`); err != nil {
			redo(db, tx, append(ok, batch[i:]...))
			return
		}
		if err := c.run(tx); err != nil {
			c.done <- err
			if _, rerr := tx.Exec(`ROLLBACK TO sqlstate_call`); rerr != nil {
				redo(db, tx, append(ok, batch[i+1:]...))
				return
			}
		} else {
			ok = append(ok, c)
		}
		if _, err := tx.Exec(`RELEASE sqlstate_call`); err != nil {
			redo(db, tx, append(ok, batch[i+1:]...))
			return
		}
	}
	if len(ok) == 0 {
		_ = tx.Rollback()
		return
	}
	if err := tx.Commit(); err != nil {
		redo(db, nil, ok)
		return
	}
	for _, c := range ok {
		c.done <- nil
	}
}

// redo gives up the shared transaction tx (when not nil) and runs calls one by one.
func redo(db *sql.DB, tx *sql.Tx, calls []*txCall) {
	if tx != nil {
		_ = tx.Rollback()
	}
	for _, c := range calls {
		c.done <- runAlone(db, c)
	}
}

// runAlone runs one call in its own transaction.
func runAlone(db *sql.DB, c *txCall) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	tx, err := db.BeginTx(Detach(c.ctx), nil)
	if err != nil {
		return err
	}
	if err := c.run(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// errPanicked stands for a call whose fn panicked; its caller panics again with the value.
var errPanicked = errors.New("state database: the transaction's function panicked")

// run runs the call's fn; a panic is caught (the transaction must still end and the lead pass
// on), its writes are undone like an error's, and the call's own caller panics with it.
func (c *txCall) run(tx *sql.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.panicked = p
			err = errPanicked
		}
	}()
	return c.fn(tx)
}

// Write runs one statement (prepared with Prepare when it was) as a write transaction of its
// own, queued with the others (see Tx): a statement run on the pool instead would compete for
// SQLite's lock with the queue's transactions and sleep in the busy handler.
func (db *DB) Write(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = Detach(ctx)
	var res sql.Result
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = db.in(ctx, tx, query).ExecContext(ctx, args...)
		return err
	})
	return res, err
}

// WriteRow is Write for a statement that returns one row (RETURNING), scanned into dest;
// sql.ErrNoRows when it returns none.
func (db *DB) WriteRow(ctx context.Context, query string, args []any, dest ...any) error {
	ctx = Detach(ctx)
	return db.Tx(ctx, func(tx *sql.Tx) error {
		return db.in(ctx, tx, query).QueryRowContext(ctx, args...).Scan(dest...)
	})
}

// in is query as a statement of tx: its preparation reused when Prepare made one.
func (db *DB) in(ctx context.Context, tx *sql.Tx, query string) interface {
	ExecContext(ctx context.Context, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, args ...any) *sql.Row
} {
	if st, err := db.Stmt(query); err == nil {
		return tx.StmtContext(ctx, st)
	}
	return txQuery{tx: tx, query: query}
}

// txQuery runs an unprepared query in tx.
type txQuery struct {
	tx    *sql.Tx
	query string
}

func (q txQuery) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return q.tx.ExecContext(ctx, q.query, args...)
}

func (q txQuery) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	return q.tx.QueryRowContext(ctx, q.query, args...)
}

// Detach is ctx without its cancellation and deadline, for running the statements of the state
// database: they take microseconds, and under a context that can end each one costs two
// goroutines (database/sql's and the driver's, watching for the end) and a progress callback
// every thousand steps. A statement then always runs to its end; a wait for the file's lock is
// bounded by the busy timeout, and the caller sees its context's end at its next step.
func Detach(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
