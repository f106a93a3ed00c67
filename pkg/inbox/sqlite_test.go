//go:build !serveronly

package inbox_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// sqliteStore opens a state database in a temporary directory with a store on it.
func sqliteStore(t *testing.T, o sqlstate.Options, mutate func(*inbox.Config)) (*sqlstate.DB, inbox.Engine, inbox.Config, *inbox.Store) {
	t.Helper()
	db := openState(t, filepath.Join(t.TempDir(), "state.db"), o)
	t.Cleanup(func() { _ = db.Close() })
	e := sqliteEngine(t, db)
	cfg := inbox.Config{Stream: "inbox:test", Group: "g", Seal: testSeal}
	if mutate != nil {
		mutate(&cfg)
	}
	return db, e, cfg, newStore(t, e, cfg)
}

func rows(t testing.TB, db *sqlstate.DB, table string) int64 {
	t.Helper()
	return count(t, db, `SELECT count(*) FROM `+table)
}

// Storage holds the traffic in flight, not its history: an acknowledged entry is deleted with
// its delivery.
func TestSQLiteAckedEntriesAreDeleted(t *testing.T) {
	db, e, cfg, s := sqliteStore(t, sqlstate.Options{}, nil)
	ctx := context.Background()
	seen := newHandled()
	runConsumer(t, e, cfg, fastConsumer("c1"), func(_ context.Context, d inbox.Delivery) error {
		seen.add(d)
		return nil
	})
	const n = 40
	for i := range n {
		if _, err := s.Append(ctx, inbox.Event{ID: fmt.Sprint("e", i), Key: fmt.Sprint("chat-", i%3), Payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every event", func() bool { return seen.distinct() == n })
	waitFor(t, "every ack", func() bool { return rows(t, db, "inbox_pending") == 0 })
	if got := rows(t, db, "inbox_entries"); got != 0 {
		t.Fatalf("entries left after every ack: %d", got)
	}
	if st := stats(t, s); st.Length != 0 || st.Lag != 0 || st.Pending != 0 || !st.Group {
		t.Fatalf("stats = %+v", st)
	}
	// The dedupe ids stay until they expire.
	if got := rows(t, db, "inbox_seen"); got != n {
		t.Fatalf("dedupe ids = %d, want %d", got, n)
	}
}

// MaxLen bounds the stream (the oldest entries beyond it are given up, as Redis MAXLEN does)
// and the dead letters.
func TestSQLiteMaxLenBoundsStreamAndDeadLetters(t *testing.T) {
	db, e, cfg, s := sqliteStore(t, sqlstate.Options{}, func(c *inbox.Config) { c.MaxLen = 5 })
	ctx := context.Background()
	for i := range 12 {
		if _, err := s.Append(ctx, inbox.Event{ID: fmt.Sprint("e", i), Key: "k"}); err != nil {
			t.Fatal(err)
		}
	}
	if st := stats(t, s); st.Length != 5 {
		t.Fatalf("length = %d, want 5", st.Length)
	}
	seen := newHandled()
	runConsumer(t, e, cfg, fastConsumer("c1"), func(_ context.Context, d inbox.Delivery) error {
		seen.add(d)
		return inbox.Permanent(errors.New("refused"))
	})
	waitFor(t, "the kept entries", func() bool { return seen.distinct() == 5 })
	waitFor(t, "acknowledgement", settled(t, s))
	seen.mu.Lock()
	if got := strings.Join(seen.order["k"], ","); got != "e7,e8,e9,e10,e11" {
		t.Errorf("handled %s, want the last five", got)
	}
	seen.mu.Unlock()
	// Seven dead letters were written in all; five are kept.
	for i := 12; i < 14; i++ {
		if _, err := s.Append(ctx, inbox.Event{ID: fmt.Sprint("e", i), Key: "k"}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "two more events", func() bool { return seen.distinct() == 7 })
	waitFor(t, "acknowledgement", func() bool { return rows(t, db, "inbox_entries") == 0 })
	if n := dead(t, s); n != 5 {
		t.Fatalf("dead letters = %d, want 5 (MaxLen)", n)
	}
	var oldest string
	if err := db.QueryRowContext(ctx, `SELECT event_id FROM inbox_dead ORDER BY seq LIMIT 1`).Scan(&oldest); err != nil || oldest != "e9" {
		t.Fatalf("oldest dead letter %q (%v), want e9", oldest, err)
	}
}

// A write lock held elsewhere (another process in a transaction) longer than the busy
// timeout: Append fails, so the webhook is not answered and the event comes again; an ack is
// retried and goes through once the lock is gone; nothing is lost or handled twice.
func TestSQLiteLockedDatabaseIsRetried(t *testing.T) {
	logs := &testinfra.SyncBuffer{}
	db, e, cfg, s := sqliteStore(t, sqlstate.Options{BusyTimeout: 50 * time.Millisecond}, nil)
	ctx := context.Background()
	// The locker waits its turn (a consumer's write transaction may be under way), then holds.
	other, err := sql.Open("sqlite", sqlstate.DSN(db.Path(), sqlstate.SyncNormal, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	lock, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()

	inHandler, release := make(chan struct{}), make(chan struct{})
	seen := newHandled()
	ccfg := fastConsumer("c1")
	ccfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	runConsumer(t, e, cfg, ccfg, func(_ context.Context, d inbox.Delivery) error {
		seen.add(d)
		if d.ID == "e1" {
			close(inHandler)
			<-release
		}
		return nil
	})
	if _, err := s.Append(ctx, inbox.Event{ID: "e1", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	<-inHandler
	if _, err := lock.ExecContext(ctx, `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, inbox.Event{ID: "e2", Key: "k"}); err == nil {
		t.Fatal("append reported success while the database was locked")
	}
	close(release) // e1 is answered: its ack meets the lock
	waitFor(t, "an ack retry", func() bool { return strings.Contains(logs.String(), "inbox.ack_retry") })
	if _, err := lock.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	// The webhook's redelivery of e2 is stored now.
	if res, err := s.Append(ctx, inbox.Event{ID: "e2", Key: "k"}); err != nil || res.Stored != 1 {
		t.Fatalf("append after the lock: %+v, %v", res, err)
	}
	waitFor(t, "e2", func() bool { return seen.times("e2") == 1 })
	waitFor(t, "every ack", func() bool { return rows(t, db, "inbox_entries") == 0 && rows(t, db, "inbox_pending") == 0 })
	if seen.times("e1") != 1 || strings.Contains(logs.String(), "inbox.ack_failed") {
		t.Fatalf("e1 handled %d times; log:\n%s", seen.times("e1"), logs.String())
	}
}

// The crash tests run a child process: this test binary again, told by childPath what to do.
const (
	childPath = "INBOX_TEST_CHILD_DB"
	childRole = "INBOX_TEST_CHILD_ROLE"
	childN    = "INBOX_TEST_CHILD_N"
)

// TestSQLiteChild is the child's side; it does nothing in a normal run.
func TestSQLiteChild(t *testing.T) {
	path := os.Getenv(childPath)
	if path == "" {
		return
	}
	n, _ := strconv.Atoi(os.Getenv(childN))
	db := openState(t, path, sqlstate.Options{})
	e := sqliteEngine(t, db)
	cfg := crashConfig()
	s := newStore(t, e, cfg)
	ctx := context.Background()
	switch os.Getenv(childRole) {
	case "append":
		// Appends n events one by one and dies the moment the last Append returned.
		for i := range n {
			if _, err := s.Append(ctx, inbox.Event{ID: fmt.Sprint("e", i), Key: fmt.Sprint("chat-", i%5), Payload: []byte("x")}); err != nil {
				t.Fatal(err)
			}
		}
	case "consume":
		// Answers the even events, holds the odd ones, and dies once every even one is
		// acknowledged (deleted) and every odd one is in hand.
		ccfg := fastConsumer("c1")
		ccfg.Concurrency = n // the held events must not keep the others waiting for a slot
		runConsumer(t, e, cfg, ccfg, func(ctx context.Context, d inbox.Delivery) error {
			if i, _ := strconv.Atoi(strings.TrimPrefix(d.ID, "e")); i%2 == 0 {
				return nil
			}
			<-ctx.Done()
			return ctx.Err()
		})
		waitFor(t, "the even events acknowledged", func() bool {
			st := stats(t, s)
			return st.Length == int64(n/2) && st.Pending == int64(n/2) && st.Lag == 0
		})
	default:
		t.Fatalf("unknown role %q", os.Getenv(childRole))
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

func crashConfig() inbox.Config {
	return inbox.Config{Stream: "inbox:crash", Group: "g", Seal: testSeal}
}

// runChild runs the child role on the database at path and checks it died by SIGKILL.
func runChild(t *testing.T, path, role string, n int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSQLiteChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childPath+"="+path, childRole+"="+role, childN+"="+strconv.Itoa(n))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("child %s: %v\n%s", role, err, out)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child %s did not die by SIGKILL: %v\n%s", role, err, out)
	}
}

// Every event Append returned for survives a SIGKILL right after, exactly once, and so do the
// dedupe ids.
func TestSQLiteAppendSurvivesSIGKILL(t *testing.T) {
	const n = 200
	path := filepath.Join(t.TempDir(), "state.db")
	runChild(t, path, "append", n)

	db := openState(t, path, sqlstate.Options{})
	defer db.Close()
	e := sqliteEngine(t, db)
	cfg := crashConfig()
	s := newStore(t, e, cfg)
	if st := stats(t, s); st.Length != n {
		t.Fatalf("entries after the crash = %d, want %d", st.Length, n)
	}
	ctx := context.Background()
	seen := newHandled()
	stop := runConsumer(t, e, cfg, fastConsumer("c1"), func(_ context.Context, d inbox.Delivery) error {
		seen.add(d)
		return nil
	})
	waitFor(t, "every event", func() bool { return seen.distinct() == n })
	waitFor(t, "acknowledgement", func() bool { return stats(t, s).Length == 0 })
	stop()
	for i := range n {
		if c := seen.times(fmt.Sprint("e", i)); c != 1 {
			t.Errorf("event e%d handled %d times", i, c)
		}
	}
	events := make([]inbox.Event, n)
	for i := range events {
		events[i] = inbox.Event{ID: fmt.Sprint("e", i), Key: "k"}
	}
	if res, err := s.Append(ctx, events...); err != nil || res.Duplicate != n {
		t.Fatalf("replay after the crash: %+v, %v", res, err)
	}
}

// A consumer killed with SIGKILL: what it acknowledged is never delivered again, what it held
// is delivered again (as redelivered) after the restart.
func TestSQLiteConsumerSurvivesSIGKILL(t *testing.T) {
	const n = 20
	path := filepath.Join(t.TempDir(), "state.db")
	db := openState(t, path, sqlstate.Options{})
	cfg := crashConfig()
	s := newStore(t, sqliteEngine(t, db), cfg)
	for i := range n {
		if _, err := s.Append(context.Background(), inbox.Event{ID: fmt.Sprint("e", i), Key: fmt.Sprint("chat-", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	runChild(t, path, "consume", n)

	db = openState(t, path, sqlstate.Options{})
	defer db.Close()
	e := sqliteEngine(t, db)
	s = newStore(t, e, cfg)
	seen := newHandled()
	runConsumer(t, e, cfg, fastConsumer("c1"), func(_ context.Context, d inbox.Delivery) error {
		seen.add(d)
		return nil
	})
	waitFor(t, "the held events", func() bool { return seen.distinct() == n/2 })
	waitFor(t, "acknowledgement", func() bool { return stats(t, s).Length == 0 })
	seen.mu.Lock()
	defer seen.mu.Unlock()
	for i := range n {
		id := fmt.Sprint("e", i)
		switch {
		case i%2 == 0 && seen.count[id] != 0:
			t.Errorf("acknowledged %s delivered again", id)
		case i%2 == 1 && (seen.count[id] != 1 || !seen.redel[id]):
			t.Errorf("held %s: handled %d times, redelivered %v", id, seen.count[id], seen.redel[id])
		}
	}
}

// Another process appending to the same file wakes nobody here: the waiting read still finds
// its events (it checks the file every half second), long before its Block ends and before it
// would look again anyway (sqliteRelook, 30 s).
func TestSQLiteSeesAnotherProcessAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := openState(t, path, sqlstate.Options{})
	defer db.Close()
	e := sqliteEngine(t, db)
	cfg := crashConfig()
	s := newStore(t, e, cfg)
	seen := newHandled()
	ccfg := fastConsumer("c1")
	ccfg.Block = time.Minute
	runConsumer(t, e, cfg, ccfg, func(_ context.Context, d inbox.Delivery) error {
		seen.add(d)
		return nil
	})
	waitFor(t, "the group", func() bool { return stats(t, s).Group })
	runChild(t, path, "append", 3)
	// Within waitFor's 10 s: the look every sqliteRelook (30 s) would be too late.
	waitFor(t, "the other process's events", func() bool { return seen.distinct() == 3 })
}
